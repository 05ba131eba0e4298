/* dbtap bench --vs-bpftrace: run bpftrace as a child, know when it is attached, read its count. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bpftrace.h"
#include "util/runloop.h"

char *bpftrace_find(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (!path)
		return NULL;
	copy = strdup(path);
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *p;
		if (asprintf(&p, "%s/bpftrace", *dir ? dir : ".") < 0)
			break;
		if (access(p, X_OK) == 0) {
			found = p;
			break;
		}
		free(p);
	}
	free(copy);
	return found;
}

/* Runs argv with stdout and stderr into a pipe; the read end in *out. */
static pid_t spawn(char *const argv[], int *out)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		/* Its own process group: a terminal's Ctrl-C reaches dbtap, which stops it. */
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

int bpftrace_version(const char *path, char *buf, size_t len)
{
	char *argv[] = { (char *)path, "--version", NULL };
	int out, status;
	ssize_t n;
	pid_t pid = spawn(argv, &out);

	if (pid < 0)
		return -1;
	n = read(out, buf, len - 1);
	close(out);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Reads what is there (waiting up to ms); 0 on data, 1 on timeout, -1 on EOF. */
static int fill(struct bpftrace_run *r, int ms)
{
	struct pollfd pfd = { .fd = r->out, .events = POLLIN };
	int n = poll(&pfd, 1, ms);

	if (n <= 0)
		return 1;
	if (r->len + 1 >= sizeof(r->buf)) {
		/* Keep the tail: the lines that matter come last. */
		memmove(r->buf, r->buf + sizeof(r->buf) / 2, r->len - sizeof(r->buf) / 2);
		r->len -= sizeof(r->buf) / 2;
	}
	ssize_t got = read(r->out, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
	if (got <= 0)
		return -1;
	r->len += got;
	r->buf[r->len] = 0;
	return 0;
}

/* bpftrace's first error line, for the "not available" reason. */
static void error_line(const struct bpftrace_run *r, char *reason, size_t rlen)
{
	for (const char *e = strstr(r->buf, "ERROR: "); e; e = strstr(e + 1, "ERROR: ")) {
		int n = (int)strcspn(e + 7, "\n");
		/* bpftrace complains about RLIMIT_MEMLOCK on every start, then works. */
		if (memmem(e, n + 7, "RLIMIT_MEMLOCK", 14))
			continue;
		snprintf(reason, rlen, "bpftrace: %.*s", n, e + 7);
		return;
	}
	snprintf(reason, rlen, "bpftrace exited without attaching");
}

int bpftrace_start(struct bpftrace_run *r, const char *path, const char *probe, pid_t pid,
		   char *reason, size_t rlen)
{
	char pidbuf[16], *prog;

	memset(r, 0, sizeof(*r));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	if (asprintf(&prog, "BEGIN { printf(\"ready\\n\"); } %s { @c = count(); }", probe) < 0)
		return 1;
	char *argv[] = { (char *)path, "-B", "line", "-f", "json", "-p", pidbuf, "-e", prog, NULL };
	r->pid = spawn(argv, &r->out);
	free(prog);
	if (r->pid < 0) {
		r->pid = 0;
		snprintf(reason, rlen, "cannot run %s: %s", path, strerror(errno));
		return 1;
	}

	/* BEGIN fires once every probe is attached; bpftrace needs ~0.5 s to get there. */
	for (int waited = 0; waited < 60000; waited += 50) {
		if (runloop_stopped()) {
			bpftrace_kill(r);
			return -1;
		}
		int f = fill(r, 50);
		if (strstr(r->buf, "\"ready\\n\""))
			return 0;
		if (f < 0)
			break;
	}
	error_line(r, reason, rlen);
	bpftrace_kill(r);
	return 1;
}

int bpftrace_stop(struct bpftrace_run *r, uint64_t *count, char *reason, size_t rlen)
{
	int status;
	const char *c;

	if (!r->pid)
		return 1;
	kill(r->pid, SIGINT);
	/* It prints @c when it exits, then closes the pipe. */
	for (int waited = 0; waited < 30000 && fill(r, 100) >= 0; waited += 100)
		;
	while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
		;
	r->pid = 0;
	close(r->out);
	c = strstr(r->buf, "\"@c\": ");
	if (!c) {
		/* No hit at all: bpftrace prints no map. */
		if (strstr(r->buf, "\"type\": \"map\"") || !strstr(r->buf, "\"ready\\n\"")) {
			error_line(r, reason, rlen);
			return 1;
		}
		*count = 0;
		return 0;
	}
	*count = strtoull(c + 6, NULL, 10);
	return 0;
}

void bpftrace_kill(struct bpftrace_run *r)
{
	int status;

	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
			;
		close(r->out);
	}
	r->pid = 0;
}
