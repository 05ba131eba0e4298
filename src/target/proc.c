/* /proc readers: titles, parents, binaries, threads, maps and load bias. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <fcntl.h>

#include "target/proc.h"
#include "util/strbuf.h"

bool proc_exists(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return pid > 0 && access(path, F_OK) == 0;
}

/* Fields after "(comm)" in /proc/PID/stat; comm may hold spaces and parentheses. */
static int read_stat_tail(pid_t pid, struct strbuf *sb, const char **tail)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (strbuf_read_file(sb, path) < 0)
		return -1;
	char *p = strrchr(sb->buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	*tail = p + 2;
	return 0;
}

pid_t proc_ppid(pid_t pid)
{
	struct strbuf sb = STRBUF_INIT;
	const char *t;
	char state;
	int ppid = -1;

	if (read_stat_tail(pid, &sb, &t) == 0 && sscanf(t, "%c %d", &state, &ppid) != 2)
		ppid = -1;
	strbuf_release(&sb);
	return ppid;
}

int proc_cpu_time_ns(pid_t pid, uint64_t *ns)
{
	struct strbuf sb = STRBUF_INIT;
	const char *t;
	unsigned long long utime, stime;
	int ret = -1;

	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (read_stat_tail(pid, &sb, &t) == 0 &&
	    sscanf(t, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) == 2) {
		long hz = sysconf(_SC_CLK_TCK);
		*ns = (utime + stime) * (1000000000ull / (hz > 0 ? hz : 100));
		ret = 0;
	}
	strbuf_release(&sb);
	return ret;
}

int proc_counters(pid_t pid, struct proc_counters *out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *t, *l;
	unsigned long long minflt, majflt, start;
	char path[64];
	int ret = -1;

	memset(out, 0, sizeof(*out));
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt ... starttime (22nd) */
	if (read_stat_tail(pid, &sb, &t) < 0 ||
	    sscanf(t, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %*u %*u %*d %*d %*d %*d %*d"
		   " %*d %llu", &minflt, &majflt, &start) != 3)
		goto out;
	out->minflt = minflt;
	out->majflt = majflt;
	out->start = start;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	strbuf_reset(&sb);
	if (strbuf_read_file(&sb, path) < 0 ||
	    sscanf(sb.buf, "%" SCNu64 " %" SCNu64, &out->run_ns, &out->runq_ns) != 2)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	strbuf_reset(&sb);
	if (strbuf_read_file(&sb, path) < 0)
		goto out;
	static const char vol[] = "\nvoluntary_ctxt_switches:", invol[] = "\nnonvoluntary_ctxt_switches:";
	if ((l = strstr(sb.buf, vol)))
		out->vcsw = strtoull(l + sizeof(vol) - 1, NULL, 10);
	if ((l = strstr(sb.buf, invol)))
		out->ivcsw = strtoull(l + sizeof(invol) - 1, NULL, 10);
	ret = 0;
out:
	strbuf_release(&sb);
	return ret;
}

unsigned proc_pid_max(void)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long v = 0;

	if (strbuf_read_file(&sb, "/proc/sys/kernel/pid_max") >= 0)
		v = strtoul(sb.buf, NULL, 10);
	strbuf_release(&sb);
	return v && v <= 4194304 ? (unsigned)v : 4194304;
}

int proc_state(pid_t pid)
{
	struct strbuf sb = STRBUF_INIT;
	const char *t;
	int c = -1;

	if (read_stat_tail(pid, &sb, &t) == 0 && t[0])
		c = (unsigned char)t[0];
	strbuf_release(&sb);
	return c;
}

pid_t proc_tgid(pid_t tid)
{
	char path[64], line[256];
	int tgid = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

int proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (strbuf_read_file(&sb, path) < 0)
		return -1;
	if (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	snprintf(buf, len, "%s", sb.buf);
	strbuf_release(&sb);
	return 0;
}

char *proc_title(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	/* PostgreSQL pads its title with NULs (and sometimes spaces): trim both. */
	while (sb.len && (sb.buf[sb.len - 1] == '\0' || sb.buf[sb.len - 1] == ' '))
		sb.len--;
	sb.buf[sb.len] = '\0';
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\0')
			sb.buf[i] = ' ';
	return strbuf_detach(&sb);
}

static char *read_link(pid_t pid, const char *what)
{
	char path[64], buf[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

char *proc_exe(pid_t pid) { return read_link(pid, "exe"); }
char *proc_cwd(pid_t pid) { return read_link(pid, "cwd"); }

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* Numeric entries of a /proc directory, sorted. */
static int list_numeric(const char *dir, pid_t **out)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0, alloc = 0;
	pid_t *v = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long x = strtol(de->d_name, &end, 10);
		if (*end || x <= 0)
			continue;
		if (n == alloc) {
			int na = alloc ? alloc * 2 : 64;
			pid_t *nv = realloc(v, na * sizeof(*v));
			if (!nv) {
				/* the old block is still ours: free it, not leak it */
				free(v);
				closedir(d);
				errno = ENOMEM;
				return -1;
			}
			v = nv;
			alloc = na;
		}
		v[n++] = (pid_t)x;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), pid_cmp);
	*out = v;
	return n;
}

int proc_threads(pid_t pid, pid_t **tids)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return list_numeric(path, tids);
}

/* Appends x to v (n used of *alloc); -1 when it cannot grow (v is still the caller's). */
static int pids_push(pid_t **v, int *n, int *alloc, pid_t x)
{
	if (*n == *alloc) {
		int na = *alloc ? *alloc * 2 : 64;
		pid_t *nv = realloc(*v, na * sizeof(**v));
		if (!nv)
			return -1;
		*v = nv;
		*alloc = na;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/*
 * The children the kernel lists per thread (/proc/PID/task/TID/children): a few reads
 * where scanning every process's stat takes hundreds. -2 where the kernel has no such
 * file (CONFIG_PROC_CHILDREN off) or the process is gone: the caller scans instead;
 * -1 out of memory.
 */
static int children_listed(pid_t ppid, pid_t **pids)
{
	char path[64], buf[4096];
	pid_t *tids, *v = NULL;
	int nt, n = 0, alloc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)ppid);
	nt = list_numeric(path, &tids);
	if (nt <= 0)
		return nt < 0 && errno == ENOMEM ? -1 : -2;
	for (int t = 0; t < nt; t++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)ppid, (int)tids[t]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT && t > 0)
				continue; /* that thread exited meanwhile */
			free(tids);
			free(v);
			return -2;
		}
		/* "PID PID ... ": digits accumulate across reads, a space ends a pid */
		long x = 0;
		ssize_t r;
		int err = 0;
		while (!err && (r = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < r && !err; i++) {
				if (buf[i] >= '0' && buf[i] <= '9') {
					x = x * 10 + (buf[i] - '0');
					if (x > INT_MAX)
						err = -2; /* not the format we know */
				} else if (x) {
					err = pids_push(&v, &n, &alloc, (pid_t)x);
					x = 0;
				}
			}
		}
		if (!err && x)
			err = pids_push(&v, &n, &alloc, (pid_t)x);
		close(fd);
		if (err) {
			free(tids);
			free(v);
			return err;
		}
	}
	free(tids);
	if (!v && !(v = malloc(sizeof(*v))))
		return -1;
	if (n)
		qsort(v, n, sizeof(*v), pid_cmp);
	*pids = v;
	return n;
}

int proc_children(pid_t ppid, pid_t **pids)
{
	pid_t *all;
	int n = children_listed(ppid, pids);

	if (n != -2)
		return n;
	n = list_numeric("/proc", &all);
	if (n < 0)
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++)
		if (proc_ppid(all[i]) == ppid)
			all[k++] = all[i];
	*pids = all;
	return k;
}

int proc_parse_maps_line(const char *line, struct map_entry *m)
{
	unsigned long long start, end, off, inode;
	int path_at = 0;
	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %llu %n", &start, &end, m->perms, &off,
		   &inode, &path_at) < 5)
		return -1;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->inode = inode;
	if (path_at > 0) {
		snprintf(m->path, sizeof(m->path), "%s", line + path_at);
		size_t l = strlen(m->path);
		while (l && (m->path[l - 1] == '\n' || m->path[l - 1] == ' '))
			m->path[--l] = '\0';
	}
	return 0;
}

int proc_maps_foreach(pid_t pid, int (*fn)(const struct map_entry *, void *), void *arg)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ret = 0;
	struct map_entry m;
	while (fgets(line, sizeof(line), f)) {
		if (proc_parse_maps_line(line, &m) < 0)
			continue;
		if ((ret = fn(&m, arg)))
			break;
	}
	fclose(f);
	return ret;
}

struct bias_ctx {
	struct stat st;
	const char *path;
	GElf_Phdr *phdrs;
	size_t nphdrs;
	uint64_t bias;
	bool found;
};

static int bias_cb(const struct map_entry *m, void *arg)
{
	struct bias_ctx *c = arg;
	if (!m->path[0] || m->inode != c->st.st_ino)
		return 0;
	if (strcmp(m->path, c->path)) {
		/* Same inode under another name (a symlink, a deleted file): check it. */
		struct stat st;
		if (stat(m->path, &st) < 0 || st.st_dev != c->st.st_dev)
			return 0;
	}
	/* The PT_LOAD whose page-aligned offset is this mapping's offset gives the bias. */
	for (size_t i = 0; i < c->nphdrs; i++) {
		GElf_Phdr *p = &c->phdrs[i];
		if (p->p_type != PT_LOAD)
			continue;
		uint64_t align_off = p->p_offset & ~(uint64_t)(getpagesize() - 1);
		if (align_off == m->offset) {
			uint64_t vaddr_page = p->p_vaddr & ~(uint64_t)(getpagesize() - 1);
			c->bias = m->start - vaddr_page;
			c->found = true;
			return 1;
		}
	}
	return 0;
}

int proc_load_bias(pid_t pid, const char *path, uint64_t *bias)
{
	struct bias_ctx c = { .path = path };
	int ret = -1;

	if (stat(path, &c.st) < 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &c.nphdrs) == 0) {
		c.phdrs = calloc(c.nphdrs, sizeof(*c.phdrs));
		for (size_t i = 0; i < c.nphdrs; i++)
			gelf_getphdr(e, i, &c.phdrs[i]);
		proc_maps_foreach(pid, bias_cb, &c);
		if (c.found) {
			*bias = c.bias;
			ret = 0;
		}
		free(c.phdrs);
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

struct mapped_ctx {
	uint64_t addr, len;
	bool ok;
};

static int mapped_cb(const struct map_entry *m, void *arg)
{
	struct mapped_ctx *c = arg;
	if (c->addr >= m->start && c->addr + c->len <= m->end) {
		c->ok = true;
		return 1;
	}
	return 0;
}

bool proc_addr_mapped(pid_t pid, uint64_t addr, uint64_t len)
{
	struct mapped_ctx c = { addr, len, false };
	proc_maps_foreach(pid, mapped_cb, &c);
	return c.ok;
}
