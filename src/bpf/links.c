/* Attaching in a child and releasing at children's exits: see links.h for why. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/links.h"
#include "util/error.h"
#include "util/runloop.h"
#include "util/phase.h"

/* fds per SCM_RIGHTS message: the kernel takes at most 253 (SCM_MAX_FD). */
#define LINKS_BATCH 200
/* Releasing children at most: links beyond share one. */
#define LINKS_MAX_RELEASERS 64
/* What the attaching child's messages may take, at most (one packet). */
#define LINKS_MSGS_MAX 16384

/* The open fds of this process, sorted; -1 on failure. */
static int fds_open(int **out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0, cap = 64, *v = malloc(cap * sizeof(*v));

	if (!d || !v) {
		if (d)
			closedir(d);
		free(v);
		return -1;
	}
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == dirfd(d))
			continue;
		if (n == cap) {
			int *nv = realloc(v, (cap *= 2) * sizeof(*v));
			if (!nv) {
				closedir(d);
				free(v);
				return -1;
			}
			v = nv;
		}
		v[n++] = (int)fd;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort: a few dozen entries */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*out = v;
	return n;
}

static bool fd_in(const int *v, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (v[i] == fd)
			return true;
	return false;
}

/* The child must not be stopped by what stops dbtap: Ctrl-C, a hangup, a group kill. */
static void child_detach_from_terminal(void)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	setpgid(0, 0);
}

/*
 * Sends rc, the messages the attach said while its thread held them (NULL: none, they
 * went to stderr), then the fds in batches. Failures are ignored: the exit releases
 * them.
 */
static void child_send(int sock, int rc, const char *msgs, const int *fds, int n)
{
	size_t len = msgs ? strlen(msgs) : 0;
	int32_t hdr[3];

	if (len > LINKS_MSGS_MAX)
		len = LINKS_MSGS_MAX;
	hdr[0] = rc;
	hdr[1] = n;
	hdr[2] = (int32_t)len;
	if (send(sock, hdr, sizeof(hdr), MSG_NOSIGNAL) != sizeof(hdr))
		return;
	if (len && send(sock, msgs, len, MSG_NOSIGNAL) != (ssize_t)len)
		return;
	for (int off = 0; off < n; off += LINKS_BATCH) {
		int k = n - off < LINKS_BATCH ? n - off : LINKS_BATCH;
		char cbuf[CMSG_SPACE(LINKS_BATCH * sizeof(int))];
		char byte = 0;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr m = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cbuf,
			.msg_controllen = CMSG_SPACE(k * sizeof(int)),
		};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		memset(cbuf, 0, sizeof(cbuf));
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(k * sizeof(int));
		memcpy(CMSG_DATA(c), fds + off, k * sizeof(int));
		if (sendmsg(sock, &m, MSG_NOSIGNAL) != 1)
			return;
	}
}

static void attach_child(int sock, int (*attach)(void *), void *arg)
{
	int *before = NULL, *after = NULL, nb, na, rc, n = 0;
	bool held = error_stream() != stderr;
	char *msgs = NULL;
	int *mine;

	child_detach_from_terminal();
	/*
	 * A thread that holds its messages (error_capture_begin(), a thread loading beside
	 * another) gets the attach's back with the fds, to print in its order: the held
	 * ones from before the fork are the parent's to print, not these.
	 */
	if (held) {
		free(error_capture_end());
		error_capture_begin();
	}
	nb = fds_open(&before);
	rc = nb < 0 ? -1 : attach(arg);
	na = rc == 0 ? fds_open(&after) : -1;
	if (rc == 0 && na < 0)
		rc = -1;
	mine = rc == 0 ? calloc(na > 0 ? na : 1, sizeof(int)) : NULL;
	if (rc == 0 && !mine)
		rc = -1;
	for (int i = 0; rc == 0 && i < na; i++)
		if (!fd_in(before, nb, after[i]))
			mine[n++] = after[i];
	/*
	 * On failure nothing is sent: what attach() made stays referenced only here, and
	 * the kernel releases it at this process's exit, which dbtap waits for.
	 */
	if (held)
		msgs = error_capture_end();
	child_send(sock, rc, msgs, mine, rc == 0 ? n : 0);
	/* No close, no atexit handlers, no stdio flush: the exit releases everything. */
	_exit(0);
}

/*
 * Receives the child's rc, its messages (into this thread's error stream) and its fds
 * into ls; -1 when the child died before saying.
 */
static int parent_receive(int sock, struct links *ls, int *rc)
{
	int32_t hdr[3];
	ssize_t r;

	do
		r = recv(sock, hdr, sizeof(hdr), 0);
	while (r < 0 && errno == EINTR);
	if (r != sizeof(hdr) || hdr[1] < 0 || hdr[2] < 0 || hdr[2] > LINKS_MSGS_MAX)
		return -1;
	*rc = hdr[0];
	if (hdr[2] > 0) {
		char *msgs = malloc(hdr[2]);
		if (!msgs)
			return -1;
		do
			r = recv(sock, msgs, hdr[2], 0);
		while (r < 0 && errno == EINTR);
		if (r > 0)
			fwrite(msgs, 1, r, error_stream());
		free(msgs);
		if (r != hdr[2])
			return -1;
	}
	ls->fds = calloc(hdr[1] > 0 ? hdr[1] : 1, sizeof(int));
	if (!ls->fds)
		return -1;
	while (ls->n < hdr[1]) {
		char cbuf[CMSG_SPACE(LINKS_BATCH * sizeof(int))], byte;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr m = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cbuf,
			.msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c;

		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1)
			return -1;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (int i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (ls->n < hdr[1])
					ls->fds[ls->n++] = fd;
				else
					close(fd); /* more than announced: not ours to keep */
			}
		}
	}
	return 0;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int links_attach_start(struct links *ls, int (*attach)(void *arg), void *arg)
{
	int sv[2];
	pid_t pid;

	memset(ls, 0, sizeof(*ls));
	phase_mark("attach");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_errno("cannot make a socket pair to attach the probes through");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_errno("cannot fork the process that attaches the probes");
	}
	if (pid == 0) {
		close(sv[0]);
		attach_child(sv[1], attach, arg);
	}
	close(sv[1]);
	ls->child = pid;
	ls->sock = sv[0];
	return 0;
}

int links_attach_wait(struct links *ls)
{
	int rc = -1;

	if (ls->child <= 0)
		return 0;
	if (parent_receive(ls->sock, ls, &rc) < 0) {
		error("the process attaching the probes died");
		hint("'dbtap -v ...' shows more; the kernel log (dmesg) may say why");
		rc = -1;
	}
	close(ls->sock);
	/* Its exit drops its copies of the links: not the last ones, cheap. */
	reap(ls->child);
	ls->child = 0;
	ls->sock = -1;
	phase_mark("attached");
	if (rc != 0)
		links_release(ls);
	return rc;
}

int links_attach(struct links *ls, int (*attach)(void *arg), void *arg)
{
	if (links_attach_start(ls, attach, arg) < 0)
		return -1;
	return links_attach_wait(ls);
}

/*
 * A releasing child: keeps the fds of its share, says it is ready, and exits when
 * dbtap has dropped its copies (the go pipe's end of file), or when dbtap is gone.
 */
static void release_child(const struct links *ls, int k, int nchildren, int ready_w, int go_r)
{
	char byte = 1;

	child_detach_from_terminal();
	/* dbtap holds every link meanwhile: these closes are never the last reference. */
	for (int i = 0; i < ls->n; i++)
		if (i % nchildren != k)
			close(ls->fds[i]);
	if (write(ready_w, &byte, 1) < 0) {
		/* dbtap is gone: its exit dropped its copies; ours go at our exit */
	}
	close(ready_w);
	while (read(go_r, &byte, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

void links_release(struct links *ls)
{
	int ready[2], go[2], nchildren, started = 0;
	unsigned signals = runloop_signals();
	pid_t *pids;

	if (ls && ls->child > 0)
		links_attach_wait(ls); /* released below, or by the wait when it failed */
	if (!ls || ls->n == 0) {
		if (ls) {
			free(ls->fds);
			memset(ls, 0, sizeof(*ls));
		}
		return;
	}
	nchildren = ls->n < LINKS_MAX_RELEASERS ? ls->n : LINKS_MAX_RELEASERS;
	pids = calloc(nchildren, sizeof(*pids));
	if (!pids || pipe2(ready, O_CLOEXEC) < 0) {
		free(pids);
		goto fallback;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		free(pids);
		goto fallback;
	}
	fflush(NULL);
	for (int k = 0; k < nchildren; k++) {
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			release_child(ls, k, nchildren, ready[1], go[0]);
		}
		pids[started++] = pid;
	}
	close(ready[1]);
	close(go[0]);
	if (started < nchildren)
		warning("cannot fork to release every probe; the rest goes when dbtap exits");
	/* Every child has closed the others' fds once the ready pipe reaches end of file. */
	for (;;) {
		char buf[64];
		ssize_t r = read(ready[0], buf, sizeof(buf));
		if (r == 0 || (r < 0 && errno != EINTR))
			break;
	}
	close(ready[0]);
	/*
	 * A share whose child could not be forked stays open here: dbtap's exit releases
	 * it (safe), where a close now would not be.
	 */
	for (int i = 0; i < ls->n; i++)
		if (i % nchildren < started)
			close(ls->fds[i]);
	close(go[1]); /* go: the children exit, and the kernel releases each share */
	for (int k = 0; k < started; k++) {
		/* a second Ctrl-C: return now, the children finish the release without us */
		if (runloop_signals() != signals)
			break;
		if (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR)
			k--;
	}
	free(pids);
	free(ls->fds);
	memset(ls, 0, sizeof(*ls));
	return;
fallback:
	/* Cannot fork: dbtap's own exit releases the links, the one safe moment left. */
	warning("cannot fork to release the probes; they go when dbtap exits");
	memset(ls, 0, sizeof(*ls));
}
