/* What a command traces: --pg TARGET, -p PID[,PID] or -t TID, resolved once. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/phase.h"

static bool looks_like_pg_target(const char *w)
{
	struct stat st;

	if (!w || !*w || w[0] == '-')
		return false;
	if (w[0] == '/' || w[0] == '.' || w[0] == '~')
		return true;
	if (stat(w, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	for (const char *p = w; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return true;
}

bool target_opt(struct target_opts *o, int opt, int argc, char **argv)
{
	switch (opt) {
	case 'P':
		o->pg_set = true;
		o->pg = optarg;
		if (!optarg && optind < argc && looks_like_pg_target(argv[optind]))
			o->pg = argv[optind++];
		return true;
	case 'p':
		o->pids = optarg;
		return true;
	case 't':
		o->tid = optarg;
		return true;
	}
	return false;
}

/* A positive decimal pid; 0 when word is not one. */
static pid_t parse_pid(const char *word, size_t len)
{
	char buf[32], *end;
	long v;

	if (!len || len >= sizeof(buf))
		return 0;
	memcpy(buf, word, len);
	buf[len] = '\0';
	v = strtol(buf, &end, 10);
	if (*end || !isdigit((unsigned char)buf[0]) || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

/*
 * The process must exist and run a program (kernel threads and zombies have none).
 * what: "pid" or "thread".
 */
static int check_traceable(pid_t pid, const char *what)
{
	char *exe;

	if (!proc_exists(pid)) {
		if (!strcmp(what, "thread"))
			error("no thread with id %d", pid);
		else
			error("no process with pid %d", pid);
		hint("'ps -e' or 'dbtap pg' lists the processes running here");
		return EXIT_FAIL;
	}
	exe = proc_exe(pid);
	if (!exe) {
		if (errno == EACCES || errno == EPERM) {
			error("%s %d cannot be traced: permission denied", what, pid);
			if (geteuid() == 0)
				/* root already: running as root again is no answer */
				hint("dbtap runs as root, yet the kernel refuses it access to %s %d: it "
				     "holds privileges dbtap lacks (capabilities, another user "
				     "namespace) or a security policy protects it", what, pid);
			else
				hint("run dbtap as root (or with CAP_BPF, CAP_PERFMON and "
				     "CAP_SYS_PTRACE)");
		} else {
			error("%s %d cannot be traced: it runs no program (a kernel thread, or it "
			      "has exited)", what, pid);
			hint("trace a user-space process; 'dbtap pg' lists PostgreSQL's");
		}
		return EXIT_FAIL;
	}
	free(exe);
	return 0;
}

int target_pid_list_parse(const char *list, pid_t **pids, int *npids)
{
	const char *p = list;

	*pids = NULL;
	*npids = 0;
	if (!*list) {
		error("-p needs a pid or a comma-separated list of pids");
		hint("e.g. -p 1234,5678");
		return EXIT_USAGE;
	}
	/* the whole list is checked before any pid is looked at: "1,,2" and "1," are typos */
	for (;;) {
		size_t n = strcspn(p, ",");
		pid_t pid = parse_pid(p, n), *v;

		if (!pid) {
			if (n)
				error("'%.*s' is not a pid (in -p '%s')", (int)n, p, list);
			else
				error("empty pid in -p '%s'", list);
			hint("-p takes pids separated by commas, e.g. -p 1234,5678");
			free(*pids);
			*pids = NULL;
			*npids = 0;
			return EXIT_USAGE;
		}
		v = realloc(*pids, (*npids + 1) * sizeof(*v));
		if (!v) {
			free(*pids);
			*pids = NULL;
			*npids = 0;
			return error("out of memory"), EXIT_FAIL;
		}
		*pids = v;
		(*pids)[(*npids)++] = pid;
		p += n;
		if (!*p)
			return 0;
		p++; /* the comma: something must follow it */
	}
}

static int resolve_pids(struct target *t, const char *list)
{
	pid_t *given;
	int ngiven, ret = target_pid_list_parse(list, &given, &ngiven);

	if (ret)
		return ret;
	for (int k = 0; k < ngiven; k++) {
		pid_t pid = given[k], tgid;

		ret = check_traceable(pid, "pid");
		if (ret)
			break;
		/* A thread id given as a pid means its whole process. */
		tgid = proc_tgid(pid);
		if (tgid > 0 && tgid != pid) {
			verbose("pid %d is a thread of process %d: tracing the process", pid, tgid);
			pid = tgid;
		}
		bool dup = false;
		for (int i = 0; i < t->npids; i++)
			dup |= t->pids[i] == pid;
		if (!dup) {
			pid_t *v = realloc(t->pids, (t->npids + 1) * sizeof(*v));
			if (!v) {
				error("out of memory");
				ret = EXIT_FAIL;
				break;
			}
			t->pids = v;
			t->pids[t->npids++] = pid;
		}
	}
	free(given);
	return ret;
}

static char *exe_of(pid_t pid)
{
	char *exe = proc_exe(pid);

	if (exe) {
		char *del = strstr(exe, " (deleted)");
		if (del)
			*del = '\0';
	}
	return exe;
}

int target_resolve(struct target *t, const struct target_opts *o, bool require)
{
	int given = o->pg_set + !!o->pids + !!o->tid;
	int ret;

	phase_mark("target");
	memset(t, 0, sizeof(*t));
	if (given > 1) {
		error("--pg, -p and -t each name the whole target: give only one");
		hint("--pg for a whole cluster, -p for processes, -t for one thread");
		return EXIT_USAGE;
	}
	if (!given) {
		if (!require)
			return 0;
		error("no target: say what to trace");
		hint("--pg [DATADIR|PORT|PID] for a PostgreSQL cluster, -p PID[,PID] for "
		     "processes, -t TID for one thread");
		return EXIT_USAGE;
	}
	if (o->pg_set) {
		ret = pg_cluster_resolve(o->pg, &t->pg);
		if (ret)
			return ret;
		t->kind = TARGET_PG;
		t->binary = t->pg.binary ? strdup(t->pg.binary) : exe_of(t->pg.postmaster);
		return 0;
	}
	if (o->pids) {
		t->kind = TARGET_PIDS;
		ret = resolve_pids(t, o->pids);
		if (ret) {
			target_free(t);
			return ret;
		}
		t->binary = exe_of(t->pids[0]);
		return 0;
	}

	pid_t tid = parse_pid(o->tid, strlen(o->tid)), tgid;
	if (!tid) {
		error("'%s' is not a thread id", o->tid);
		hint("-t takes one thread id, e.g. from 'ps -eLf' or /proc/PID/task");
		return EXIT_USAGE;
	}
	ret = check_traceable(tid, "thread");
	if (ret)
		return ret;
	tgid = proc_tgid(tid);
	if (tgid <= 0) {
		error("no thread with id %d", tid);
		hint("'ps -eLf' lists the threads running here");
		return EXIT_FAIL;
	}
	t->pids = malloc(sizeof(*t->pids));
	if (!t->pids)
		return error("out of memory"), EXIT_FAIL;
	t->kind = TARGET_TID;
	t->pids[0] = tgid;
	t->npids = 1;
	t->tid = tid;
	t->binary = exe_of(tgid);
	return 0;
}

void target_free(struct target *t)
{
	if (t->kind == TARGET_PG)
		pg_cluster_free(&t->pg);
	free(t->pids);
	free(t->binary);
	memset(t, 0, sizeof(*t));
}

bool target_alive(const struct target *t)
{
	switch (t->kind) {
	case TARGET_PG:
		return proc_exists(t->pg.postmaster);
	case TARGET_PIDS:
		for (int i = 0; i < t->npids; i++)
			if (proc_exists(t->pids[i]))
				return true;
		return false;
	case TARGET_TID:
		return proc_exists(t->tid);
	case TARGET_NONE:
		break;
	}
	return true;
}

bool target_has_pid(const struct target *t, pid_t pid)
{
	switch (t->kind) {
	case TARGET_PG:
		return pid == t->pg.postmaster || proc_ppid(pid) == t->pg.postmaster;
	case TARGET_PIDS:
	case TARGET_TID:
		for (int i = 0; i < t->npids; i++)
			if (t->pids[i] == pid)
				return true;
		return false;
	case TARGET_NONE:
		break;
	}
	return true;
}

const char *target_proc_type(struct target *t, pid_t pid)
{
	if (t->kind != TARGET_PG)
		return "";
	return pg_cluster_proc_type(&t->pg, pid);
}

const char *target_describe(const struct target *t)
{
	static __thread char buf[PATH_MAX + 128]; /* a thread of its own may describe it too */
	struct strbuf sb = STRBUF_INIT;

	switch (t->kind) {
	case TARGET_PG:
		strbuf_addf(&sb, "PostgreSQL %s cluster at %s (postmaster pid %d)",
			    t->pg.version[0] ? t->pg.version : "?", t->pg.datadir, t->pg.postmaster);
		break;
	case TARGET_PIDS:
		strbuf_addstr(&sb, t->npids > 1 ? "pids " : "pid ");
		for (int i = 0; i < t->npids; i++)
			strbuf_addf(&sb, "%s%d", i ? "," : "", t->pids[i]);
		break;
	case TARGET_TID:
		strbuf_addf(&sb, "thread %d of pid %d", t->tid, t->pids[0]);
		break;
	case TARGET_NONE:
		strbuf_addstr(&sb, "every process");
		break;
	}
	snprintf(buf, sizeof(buf), "%s", sb.buf);
	strbuf_release(&sb);
	return buf;
}

const char *target_opts_spell(const struct target_opts *o, char *buf, size_t len)
{
	if (o->pg_set && o->pg && *o->pg)
		snprintf(buf, len, " --pg=%s", o->pg);
	else if (o->pg_set)
		snprintf(buf, len, " --pg");
	else if (o->pids)
		snprintf(buf, len, " -p %s", o->pids);
	else if (o->tid)
		snprintf(buf, len, " -t %s", o->tid);
	else
		snprintf(buf, len, "%s", "");
	return buf;
}
