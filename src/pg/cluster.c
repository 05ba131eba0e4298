/* PostgreSQL clusters running here: postmasters from /proc, postmaster.pid, backend types. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pg/cluster.h"
#include "target/proc.h"
#include "target/scan.h"
#include "util/error.h"
#include "util/strbuf.h"

static void copy(char *dst, size_t len, const char *src, size_t n)
{
	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void copy_str(char *dst, size_t len, const char *src)
{
	copy(dst, len, src, strlen(src));
}

/* postmaster.pid: one value per line, in this order (miscadmin.h LOCK_FILE_LINE_*). */
int pg_pidfile_parse(const char *text, struct pg_pidfile *pf)
{
	const char *line = text;
	char *end;

	memset(pf, 0, sizeof(*pf));
	for (int i = 1; line && *line; i++) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char val[512];

		/* The status line is padded with spaces so it can be rewritten in place. */
		while (n && isspace((unsigned char)line[n - 1]))
			n--;
		copy(val, sizeof(val), line, n);
		switch (i) {
		case 1: {
			/* A standalone backend (postgres --single) writes its pid negated. */
			long pid = strtol(val, &end, 10);
			if (end == val || *end || pid == 0 || pid > INT_MAX || pid < -INT_MAX)
				return -1;
			pf->pid = (pid_t)pid;
			break;
		}
		case 2:
			if (val[0] != '/')
				return -1;
			copy_str(pf->datadir, sizeof(pf->datadir), val);
			break;
		case 3:
			pf->start_time = strtol(val, NULL, 10);
			break;
		case 4:
			pf->port = (int)strtol(val, NULL, 10);
			break;
		case 5:
			copy_str(pf->socket_dir, sizeof(pf->socket_dir), val);
			break;
		case 6:
			copy_str(pf->listen_addr, sizeof(pf->listen_addr), val);
			break;
		case 7: {
			const char *v = val;
			while (*v == ' ')
				v++;
			copy_str(pf->shmem_key, sizeof(pf->shmem_key), v);
			break;
		}
		case 8:
			copy_str(pf->status, sizeof(pf->status), val);
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	return pf->datadir[0] ? 0 : -1;
}

/*
 * Titles of the processes that are not client backends, and the
 * pg_stat_activity.backend_type each one reports. A title is either the name alone or
 * the name followed by a space and details ("autovacuum worker DB", "archiver last
 * was ...", "parallel worker for PID 123", "walsender USER HOST STATUS").
 */
static const struct {
	const char *title;
	const char *type;
} aux_types[] = {
	{ "checkpointer", "checkpointer" },
	{ "background writer", "background writer" },
	{ "walwriter", "walwriter" },
	{ "autovacuum launcher", "autovacuum launcher" },
	{ "autovacuum worker", "autovacuum worker" },
	{ "logical replication launcher", "logical replication launcher" },
	/* 16+: apply, tablesync and parallel apply workers have their own types. */
	{ "logical replication apply worker", "logical replication apply worker" },
	{ "logical replication tablesync worker", "logical replication tablesync worker" },
	{ "logical replication parallel apply worker", "logical replication parallel worker" },
	/* 12-15: "logical replication worker for subscription N [sync N]". */
	{ "logical replication worker", "logical replication worker" },
	{ "parallel worker", "parallel worker" },
	{ "walsender", "walsender" },
	{ "walreceiver", "walreceiver" },
	{ "startup", "startup" },
	{ "archiver", "archiver" },
	{ "logger", "logger" },
	{ "stats collector", "stats collector" },   /* 12-14 */
	{ "walsummarizer", "walsummarizer" },       /* 17+ */
	{ "slotsync worker", "slotsync worker" },   /* 17+ */
	{ "io worker", "io worker" },               /* 18+ */
};

/* Splits off the next space-separated word of *s into buf; false at the end. */
static bool next_word(const char **s, char *buf, size_t len)
{
	const char *p = *s, *w;

	while (*p == ' ')
		p++;
	if (!*p)
		return false;
	w = p;
	while (*p && *p != ' ')
		p++;
	copy(buf, len, w, p - w);
	while (*p == ' ')
		p++;
	*s = p;
	return true;
}

/* A client connection's host part: "[local]", "HOST(PORT)". */
static bool is_client_host(const char *w)
{
	size_t n = strlen(w);
	const char *open;

	if (!strcmp(w, "[local]"))
		return true;
	if (n < 4 || w[n - 1] != ')' || !(open = strrchr(w, '(')) || open == w)
		return false;
	for (const char *p = open + 1; p < w + n - 1; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return open + 1 < w + n - 1;
}

/* Parses the part after "postgres: " and the cluster name, if any; 0 or -1. */
static int parse_rest(const char *rest, struct pg_title *t)
{
	const char *s;
	char w[3][128];

	/*
	 * A client backend: "USER DB HOST STATUS", HOST being [local] or ADDR(PORT). Tried
	 * first so that a user named like a process type stays a client; only walsender
	 * titles have the same shape ("walsender USER HOST"), and they win.
	 */
	s = rest;
	if (strncmp(rest, "walsender ", 10) && next_word(&s, w[0], sizeof(w[0])) &&
	    next_word(&s, w[1], sizeof(w[1])) && next_word(&s, w[2], sizeof(w[2])) &&
	    is_client_host(w[2])) {
		copy_str(t->type, sizeof(t->type), "client backend");
		copy_str(t->user, sizeof(t->user), w[0]);
		copy_str(t->database, sizeof(t->database), w[1]);
		copy_str(t->host, sizeof(t->host), w[2]);
		copy_str(t->activity, sizeof(t->activity), s);
		return 0;
	}
	for (size_t i = 0; i < sizeof(aux_types) / sizeof(aux_types[0]); i++) {
		size_t n = strlen(aux_types[i].title);
		if (strncmp(rest, aux_types[i].title, n) || (rest[n] && rest[n] != ' '))
			continue;
		copy_str(t->type, sizeof(t->type), aux_types[i].type);
		s = rest + n;
		while (*s == ' ')
			s++;
		if (!strcmp(aux_types[i].type, "walsender")) {
			/* "walsender USER HOST STATUS": no database, it is a replication link. */
			next_word(&s, t->user, sizeof(t->user));
			next_word(&s, t->host, sizeof(t->host));
		} else if (!strcmp(aux_types[i].type, "autovacuum worker")) {
			next_word(&s, t->database, sizeof(t->database));
		}
		copy_str(t->activity, sizeof(t->activity), s);
		return 0;
	}
	return -1;
}

int pg_title_parse_full(const char *title, struct pg_title *t)
{
	static const char prefix[] = "postgres: ";
	const char *rest, *colon;

	memset(t, 0, sizeof(*t));
	if (strncmp(title, prefix, sizeof(prefix) - 1))
		return -1;
	rest = title + sizeof(prefix) - 1;
	if (parse_rest(rest, t) == 0)
		return 0;
	/*
	 * cluster_name puts "NAME: " in front of the rest. The name may hold spaces or
	 * even ": ", so try each split until the remainder reads as a known title.
	 */
	for (colon = strstr(rest, ": "); colon; colon = strstr(colon + 1, ": ")) {
		if (parse_rest(colon + 2, t) == 0) {
			copy(t->cluster_name, sizeof(t->cluster_name), rest, colon - rest);
			return 0;
		}
	}
	/* A background worker of an extension: its title is its own bgw_name. */
	memset(t, 0, sizeof(*t));
	copy_str(t->type, sizeof(t->type), "background worker");
	copy_str(t->activity, sizeof(t->activity), rest);
	return 0;
}

int pg_title_parse(const char *title, char *type, size_t tlen, char *user, size_t ulen,
		   char *db, size_t dlen)
{
	struct pg_title t;

	if (pg_title_parse_full(title, &t) < 0)
		return -1;
	if (type)
		copy_str(type, tlen, t.type);
	if (user)
		copy_str(user, ulen, t.user);
	if (db)
		copy_str(db, dlen, t.database);
	return 0;
}

static void proc_fill(struct pg_proc *p, pid_t pid, const char *type_if_unparsed)
{
	struct pg_title t;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->title = proc_title(pid);
	if (type_if_unparsed) {
		copy_str(p->type, sizeof(p->type), type_if_unparsed);
		return;
	}
	if (p->title && pg_title_parse_full(p->title, &t) == 0) {
		copy_str(p->type, sizeof(p->type), t.type);
		copy_str(p->user, sizeof(p->user), t.user);
		copy_str(p->database, sizeof(p->database), t.database);
		copy_str(p->host, sizeof(p->host), t.host);
		copy_str(p->activity, sizeof(p->activity), t.activity);
	} else {
		/* Just forked: the title is still the postmaster's command line. */
		copy_str(p->type, sizeof(p->type), "unknown");
	}
}

static void procs_free(struct pg_cluster *c)
{
	for (int i = 0; i < c->nprocs; i++)
		free(c->procs[i].title);
	free(c->procs);
	c->procs = NULL;
	c->nprocs = 0;
}

/* The cluster name, from the first child title that carries one. */
static void cluster_name_from_titles(struct pg_cluster *c)
{
	struct pg_title t;

	c->cluster_name[0] = '\0';
	for (int i = 1; i < c->nprocs; i++) {
		if (c->procs[i].title && pg_title_parse_full(c->procs[i].title, &t) == 0 &&
		    t.cluster_name[0]) {
			copy_str(c->cluster_name, sizeof(c->cluster_name), t.cluster_name);
			break;
		}
	}
	if (!c->cluster_name[0])
		return;
	/* Background workers of extensions: their own name follows the cluster's. */
	size_t n = strlen(c->cluster_name);
	for (int i = 1; i < c->nprocs; i++) {
		char *a = c->procs[i].activity;
		if (!strcmp(c->procs[i].type, "background worker") &&
		    !strncmp(a, c->cluster_name, n) && a[n] == ':' && a[n + 1] == ' ')
			memmove(a, a + n + 2, strlen(a + n + 2) + 1);
	}
}

/* procs = the postmaster, then children (sorted pids). */
static int procs_set(struct pg_cluster *c, const pid_t *children, int n)
{
	procs_free(c);
	c->procs = calloc(n + 1, sizeof(*c->procs));
	if (!c->procs)
		return -1;
	proc_fill(&c->procs[0], c->postmaster, "postmaster");
	for (int i = 0; i < n; i++)
		proc_fill(&c->procs[i + 1], children[i], NULL);
	c->nprocs = n + 1;
	cluster_name_from_titles(c);
	return 0;
}

int pg_cluster_refresh_procs(struct pg_cluster *c)
{
	pid_t *kids = NULL;
	int n = proc_children(c->postmaster, &kids);
	int ret;

	if (n < 0)
		return -1;
	ret = procs_set(c, kids, n);
	free(kids);
	return ret;
}

/* A server binary: .../postgres, or the postmaster link of old installations. */
static bool is_server_exe(const char *exe)
{
	const char *base = strrchr(exe, '/');

	base = base ? base + 1 : exe;
	return !strcmp(base, "postgres") || !strncmp(base, "postgres ", 9) ||
	       !strcmp(base, "postmaster") || !strncmp(base, "postmaster ", 11);
}

static char *read_small_file(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* Fills major, version, pidfile from the data directory and the binary. */
static void cluster_fill_versions(struct pg_cluster *c)
{
	char *s = read_small_file(c->datadir, "PG_VERSION");
	char path[64], buf[128];

	if (s) {
		c->major = atoi(s);
		free(s);
	}
	/*
	 * Through /proc/PID/exe: it still reads after a package upgrade removed the file.
	 * The string sits deep in .rodata: read once per binary (several clusters usually
	 * run the same one), and only that section.
	 */
	static struct { dev_t dev; ino_t ino; char version[sizeof(c->version)]; } seen[8];
	static int nseen;
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", c->postmaster);
	bool have_id = stat(path, &st) == 0;
	for (int i = 0; have_id && i < nseen && !c->version[0]; i++)
		if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino)
			copy_str(c->version, sizeof(c->version), seen[i].version);
	if (!c->version[0] &&
	    file_find_string_in(path, ".rodata", "(PostgreSQL) ", buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, " ")] = '\0';
		copy_str(c->version, sizeof(c->version), buf);
		if (have_id && nseen < 8) {
			seen[nseen].dev = st.st_dev;
			seen[nseen].ino = st.st_ino;
			copy_str(seen[nseen++].version, sizeof(seen[0].version), buf);
		}
	}
	if (!c->major && c->version[0])
		c->major = atoi(c->version);
	s = read_small_file(c->datadir, "postmaster.pid");
	if (s) {
		c->have_pidfile = pg_pidfile_parse(s, &c->pidfile) == 0 &&
				  c->pidfile.pid == c->postmaster;
		free(s);
	}
}

struct cand {
	pid_t pid, ppid;
};

static int cand_find(const struct cand *v, int n, pid_t pid)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (v[mid].pid == pid)
			return mid;
		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int pg_cluster_discover(struct pg_cluster_list *list)
{
	pid_t *all = NULL;
	int n = proc_list(&all), nc = 0;
	struct cand *cands;

	list->c = NULL;
	list->n = 0;
	list->hidden = 0;
	if (n < 0)
		return error_errno("cannot list /proc");
	cands = calloc(n ? n : 1, sizeof(*cands));
	if (!cands) {
		free(all);
		return error("out of memory");
	}
	for (int i = 0; i < n; i++) {
		char *exe = proc_exe(all[i]);
		if (!exe && (errno == EACCES || errno == EPERM)) {
			/* Another user's process: only its name is visible. */
			char comm[32];
			if (proc_comm(all[i], comm, sizeof(comm)) == 0 &&
			    (!strcmp(comm, "postgres") || !strcmp(comm, "postmaster")))
				list->hidden++;
		}
		if (exe && is_server_exe(exe)) {
			pid_t pp = proc_ppid(all[i]);
			if (pp > 0) {
				cands[nc].pid = all[i];
				cands[nc].ppid = pp;
				nc++;
			}
		}
		free(exe);
	}
	free(all);

	for (int i = 0; i < nc; i++) {
		struct pg_cluster c = { 0 };
		char *cwd;
		char verpath[PATH_MAX];

		/* Children of a postmaster run the same binary; the postmaster's parent does not. */
		if (cand_find(cands, nc, cands[i].ppid) >= 0)
			continue;
		/*
		 * Children orphaned by a postmaster that died keep their "postgres: ..."
		 * titles; a postmaster keeps its command line.
		 */
		char *title = proc_title(cands[i].pid);
		bool child_title = !title || !strncmp(title, "postgres: ", 10);
		free(title);
		if (child_title)
			continue;
		cwd = proc_cwd(cands[i].pid);
		/* The postmaster works in its data directory; anything else is a client tool. */
		snprintf(verpath, sizeof(verpath), "%s/PG_VERSION", cwd ? cwd : "");
		if (!cwd || access(verpath, F_OK) < 0) {
			if (!cwd && (errno == EACCES || errno == EPERM))
				list->hidden++;
			free(cwd);
			continue;
		}
		c.postmaster = cands[i].pid;
		c.datadir = cwd;
		c.binary = proc_exe(c.postmaster);
		if (c.binary) {
			char *del = strstr(c.binary, " (deleted)");
			if (del)
				*del = '\0';
		}
		cluster_fill_versions(&c);

		pid_t *kids = calloc(nc ? nc : 1, sizeof(*kids));
		int nk = 0;
		if (!kids) {
			pg_cluster_free(&c);
			continue;
		}
		for (int k = 0; k < nc; k++)
			if (cands[k].ppid == c.postmaster)
				kids[nk++] = cands[k].pid;
		procs_set(&c, kids, nk);
		free(kids);

		struct pg_cluster *v = realloc(list->c, (list->n + 1) * sizeof(*v));
		if (!v) {
			pg_cluster_free(&c);
			break;
		}
		list->c = v;
		list->c[list->n++] = c;
	}
	free(cands);
	return 0;
}

void pg_cluster_free(struct pg_cluster *c)
{
	procs_free(c);
	free(c->binary);
	free(c->datadir);
	memset(c, 0, sizeof(*c));
}

void pg_cluster_list_free(struct pg_cluster_list *list)
{
	for (int i = 0; i < list->n; i++)
		pg_cluster_free(&list->c[i]);
	free(list->c);
	list->c = NULL;
	list->n = 0;
}

const char *pg_cluster_proc_type(struct pg_cluster *c, pid_t pid)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < c->nprocs; i++)
			if (c->procs[i].pid == pid)
				return c->procs[i].type;
		/* A backend forked since the last look. */
		if (pass == 0 && (proc_ppid(pid) != c->postmaster ||
				  pg_cluster_refresh_procs(c) < 0))
			break;
	}
	return "";
}

/* The choices, one per line, for hints. */
static void hint_choices(const struct pg_cluster_list *list)
{
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < list->n; i++) {
		const struct pg_cluster *c = &list->c[i];
		strbuf_addf(&sb, "\n  --pg %s", c->datadir);
		if (c->have_pidfile)
			strbuf_addf(&sb, "  (port %d, postmaster pid %d, PostgreSQL %s)",
				    c->pidfile.port, c->postmaster, c->version);
		else
			strbuf_addf(&sb, "  (postmaster pid %d, PostgreSQL %s)", c->postmaster,
				    c->version);
	}
	hint("say which cluster with --pg DATADIR, --pg PORT or --pg PID; running here:%s",
	     sb.buf);
	strbuf_release(&sb);
}

static int take(struct pg_cluster_list *list, int i, struct pg_cluster *out)
{
	*out = list->c[i];
	memset(&list->c[i], 0, sizeof(list->c[i]));
	pg_cluster_list_free(list);
	return 0;
}

static int fail(struct pg_cluster_list *list, int ret)
{
	pg_cluster_list_free(list);
	return ret;
}

static int resolve_number(struct pg_cluster_list *list, const char *spec, long v,
			  struct pg_cluster *out)
{
	int found = -1, nport = 0;

	for (int i = 0; i < list->n; i++)
		if (list->c[i].postmaster == v)
			return take(list, i, out);
	for (int i = 0; i < list->n; i++) {
		if (list->c[i].have_pidfile && list->c[i].pidfile.port == v) {
			found = i;
			nport++;
		}
	}
	if (nport == 1)
		return take(list, found, out);
	if (nport > 1) {
		error("%d PostgreSQL clusters run with port %ld (each its own socket directory)",
		      nport, v);
		hint_choices(list);
		return fail(list, EXIT_USAGE);
	}
	for (int i = 0; i < list->n; i++) {
		const char *type = pg_cluster_proc_type(&list->c[i], (pid_t)v);
		if (type[0]) {
			error("pid %ld is a %s of the cluster at %s, not its postmaster", v, type,
			      list->c[i].datadir);
			hint("use --pg %d (the postmaster) for the whole cluster, or -p %ld for "
			     "this process alone", list->c[i].postmaster, v);
			return fail(list, EXIT_USAGE);
		}
	}
	error("no PostgreSQL cluster here has port or postmaster pid %s", spec);
	if (list->n)
		hint_choices(list);
	else
		hint("no PostgreSQL server runs on this machine; 'dbtap pg' lists those that do");
	return fail(list, EXIT_FAIL);
}

static int resolve_dir(struct pg_cluster_list *list, const char *spec, struct pg_cluster *out)
{
	char real[PATH_MAX], path[PATH_MAX + 32];
	struct stat st;
	char *text;
	struct pg_pidfile pf;

	if (stat(spec, &st) < 0) {
		error_errno("cannot use '%s' as a data directory", spec);
		hint("--pg takes a data directory, a port or a postmaster pid; 'dbtap pg' "
		     "lists the clusters running here");
		return fail(list, EXIT_USAGE);
	}
	if (!S_ISDIR(st.st_mode) || !realpath(spec, real)) {
		error("'%s' is not a directory", spec);
		hint("--pg takes a data directory, a port or a postmaster pid");
		return fail(list, EXIT_USAGE);
	}
	snprintf(path, sizeof(path), "%s/PG_VERSION", real);
	if (access(path, F_OK) < 0 && (errno == EACCES || errno == EPERM)) {
		/* a data directory is 0700 to its owner: the cause is not what it holds */
		error("cannot look into '%s': permission denied", spec);
		hint("a data directory can be read only by its owner and root: run dbtap as "
		     "root (sudo dbtap ...)");
		return fail(list, EXIT_FAIL);
	}
	if (access(path, F_OK) < 0) {
		error("'%s' is not a PostgreSQL data directory (it has no PG_VERSION)", spec);
		hint("give the directory initdb created (SHOW data_directory in psql); "
		     "'dbtap pg' lists those of running clusters");
		return fail(list, EXIT_USAGE);
	}
	for (int i = 0; i < list->n; i++)
		if (!strcmp(list->c[i].datadir, real))
			return take(list, i, out);

	text = read_small_file(real, "postmaster.pid");
	if (!text) {
		error("no PostgreSQL server runs on data directory '%s' (no postmaster.pid)", spec);
		hint("start it first, e.g. pg_ctl -D %s start", real);
		return fail(list, EXIT_FAIL);
	}
	if (pg_pidfile_parse(text, &pf) < 0) {
		free(text);
		error("cannot parse '%s/postmaster.pid'", spec);
		hint("the server may be starting or stopping; try again");
		return fail(list, EXIT_FAIL);
	}
	free(text);
	if (!proc_exists(pf.pid < 0 ? -pf.pid : pf.pid)) {
		error("stale postmaster.pid in '%s': pid %d is not running", spec,
		      pf.pid < 0 ? -pf.pid : pf.pid);
		hint("the server is not running (it crashed or was killed); start it with "
		     "pg_ctl -D %s start, which replaces the stale file", real);
	} else if (pf.pid < 0) {
		error("'%s' is used by a standalone backend (pid %d), not a server", spec, -pf.pid);
		hint("trace that process with -p %d", -pf.pid);
	} else {
		error("stale postmaster.pid in '%s': pid %d is another program now", spec, pf.pid);
		hint("the server is not running; start it with pg_ctl -D %s start", real);
	}
	return fail(list, EXIT_FAIL);
}

/*
 * The cluster whose postmaster is pid, when it is one (a server binary with its
 * command line, not a child's title, working in a data directory: want_dir when
 * given): 0 and *out filled, or -1 and nothing kept. Reads that one process and its
 * children, not every process of every cluster here.
 */
static int cluster_of_postmaster(pid_t pid, const char *want_dir, struct pg_cluster *out)
{
	struct pg_cluster c = { 0 };
	char verpath[PATH_MAX];
	char *exe = proc_exe(pid), *title;
	bool ok = exe && is_server_exe(exe);

	free(exe);
	if (!ok)
		return -1;
	title = proc_title(pid);
	ok = title && strncmp(title, "postgres: ", 10);
	free(title);
	if (!ok)
		return -1;
	c.datadir = proc_cwd(pid);
	snprintf(verpath, sizeof(verpath), "%s/PG_VERSION", c.datadir ? c.datadir : "");
	if (!c.datadir || access(verpath, F_OK) < 0 || (want_dir && strcmp(c.datadir, want_dir))) {
		free(c.datadir);
		return -1;
	}
	c.postmaster = pid;
	c.binary = proc_exe(pid);
	if (c.binary) {
		char *del = strstr(c.binary, " (deleted)");
		if (del)
			*del = '\0';
	}
	cluster_fill_versions(&c);
	if (pg_cluster_refresh_procs(&c) < 0 || !c.nprocs) {
		pg_cluster_free(&c);
		return -1;
	}
	*out = c;
	return 0;
}

/* --pg DATADIR of a running server: its postmaster.pid names the one to look at. */
static int resolve_dir_fast(const char *spec, struct pg_cluster *out)
{
	char real[PATH_MAX];
	struct pg_pidfile pf;
	char *text;
	int ok;

	if (!realpath(spec, real) || !(text = read_small_file(real, "postmaster.pid")))
		return -1;
	ok = pg_pidfile_parse(text, &pf) == 0 && pf.pid > 0;
	free(text);
	return ok ? cluster_of_postmaster(pf.pid, real, out) : -1;
}

int pg_cluster_lookup(const char *spec, struct pg_cluster *out)
{
	char *end;
	long v;
	bool number;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return -1;
	v = strtol(spec, &end, 10);
	number = isdigit((unsigned char)spec[0]) && !*end;
	if (number)
		return v > 0 && v <= INT_MAX ? cluster_of_postmaster((pid_t)v, NULL, out) : -1;
	return resolve_dir_fast(spec, out);
}

int pg_cluster_resolve(const char *spec, struct pg_cluster *out)
{
	struct pg_cluster_list list;
	char *end;

	/*
	 * A data directory or a postmaster pid names one process: only it is read. The
	 * rest (no spec, a port, a mistake) scans every cluster, for the choices and the
	 * errors that name them.
	 */
	if (pg_cluster_lookup(spec, out) == 0)
		return 0;
	if (pg_cluster_discover(&list) < 0)
		return EXIT_FAIL;
	if (!spec || !*spec) {
		if (list.n == 1)
			return take(&list, 0, out);
		if (list.n == 0) {
			if (list.hidden) {
				error("no PostgreSQL server found: %d of its processes could not be "
				      "inspected", list.hidden);
				hint("run as root (or as the user the server runs as)");
			} else {
				error("no PostgreSQL server runs on this machine");
				hint("start one, or trace any process with -p PID");
			}
			return fail(&list, EXIT_FAIL);
		}
		error("%d PostgreSQL clusters run here; dbtap will not guess which", list.n);
		hint_choices(&list);
		return fail(&list, EXIT_USAGE);
	}
	long v = strtol(spec, &end, 10);
	if (isdigit((unsigned char)spec[0]) && !*end) {
		if (v <= 0 || v > INT_MAX) {
			error("'%s' is not a port, a pid or a data directory", spec);
			hint("'dbtap pg' lists the clusters running here");
			return fail(&list, EXIT_USAGE);
		}
		return resolve_number(&list, spec, v, out);
	}
	return resolve_dir(&list, spec, out);
}

bool pg_is_postmaster(pid_t pid)
{
	struct pg_cluster_list list;
	bool yes = false;

	if (pg_cluster_discover(&list) < 0)
		return false;
	for (int i = 0; i < list.n && !yes; i++)
		yes = list.c[i].postmaster == pid;
	pg_cluster_list_free(&list);
	return yes;
}
