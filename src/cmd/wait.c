/* dbtap wait: where backends' time goes, in seconds: CPU, each wait event, by statement. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/wait.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "pg/cluster.h"
#include "pg/layout.h"
#include "pg/probes.h"
#include "pg/waitevent.h"
#include "report/flame.h"
#include "report/folded.h"
#include "report/stackset.h"
#include "target/elf.h"
#include "target/label.h"
#include "target/mem.h"
#include "target/proc.h"
#include "target/symbolize.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"

enum wait_by { WBY_EVENT, WBY_TYPE, WBY_PID, WBY_DATABASE, WBY_USER, WBY_QUERY };
/* --sort: what --top keeps, largest first, for rows and for groups alike. */
enum wait_sort { WSORT_WAIT, WSORT_COUNT, WSORT_MEAN, WSORT_MAX };
static const char *const sort_names[] = { "wait_s", "count", "mean", "max" };
static const char *const by_names[] = { "event", "type", "pid", "database", "user", "query" };

/* What user space knows of a traced process; final once target_label() says so. */
struct pinfo {
	__u32 pid;
	bool final;
	char type[64], user[64], database[64];
};

/* One line of a report: a group (pid, database, user, statement) and a wait. */
struct row {
	char group[WAIT_TEXT_LEN * 2]; /* "" for --by event|type */
	__u32 pid;                     /* --by pid */
	__u32 kind, event;             /* event 0 for --by type and for non-wait kinds */
	uint64_t ns, count, max_ns;
};

/* Per process over a report: where its wall time went, by kind. */
struct pacc {
	__u32 pid;
	uint64_t wall_ns;
	uint64_t kind_ns[WAIT_NKINDS];
	bool exited;
};

/* All figures at one instant: aggregates plus the stretches in progress. */
struct snap {
	struct wait_entry *e;
	int n;
	struct pacc *p;
	int np;
	uint64_t now;
};

struct wait_cmd {
	struct frame f;
	struct target t;
	enum wait_by by;
	enum wait_sort sort;
	int top;
	bool include_idle, stacks;
	const char *out_path;
	int major;
	struct wait_probe_opts po;
	struct wait_probe *wp;
	struct pinfo *pi;
	int npi;
	struct snap prev;
	struct symbolizer *sym; /* --stacks */
	bool attached, list;
	bool usdt; /* --usdt: the probes, where PgBackendStatus could be read */
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_TOP, OPT_SORT, OPT_IDLE, OPT_STACKS, OPT_FLOOR, OPT_LIST,
       OPT_USDT };

static const struct frame_opt wait_opts[] = {
	FRAME_OPT_PG,
	{ NULL, 'p', required_argument, "PID[,PID]", "these server processes (of one cluster)",
	  FRAME_OPT_TARGET },
	{ "tid", 't', required_argument, "TID", "one server process (its thread)", FRAME_OPT_TARGET },
	FRAME_OPTS_TIME,
	{ "by", OPT_BY, required_argument, "event|type|pid|database|user|query",
	  "rows by wait event (default) or wait event type; or per\n"
	  "process, database, user or statement (literals as $n)" },
	{ "top", OPT_TOP, required_argument, "N", "rows (groups with --by pid...) listed (default 20)" },
	{ "sort", OPT_SORT, required_argument, "KEY",
	  "which rows (groups) --top keeps, largest first: wait_s (total\n"
	  "seconds, the default), count, mean or max" },
	{ "include-idle", OPT_IDLE, no_argument, NULL,
	  "count idle time (ClientRead outside a transaction) in the totals" },
	{ "stacks", OPT_STACKS, no_argument, NULL,
	  "kernel and user stacks at each switch-out: an off-CPU flame graph" },
	{ "output", 'o', required_argument, "FILE", "--stacks: FILE.svg (flame graph) or FILE.folded" },
	{ "usdt", OPT_USDT, no_argument, NULL,
	  "the transaction state and statements from the USDT probes (a trap\n"
	  "each) instead of the backends' PgBackendStatus (15 and 16 have it)" },
	{ "list-events", OPT_LIST, no_argument, NULL,
	  "print the wait events of the server's version with their ids, and exit" },
	/* bench/wait-switch.sh: an empty program at the same tracepoint, the cost floor */
	{ "empty-program", OPT_FLOOR, no_argument, NULL, "", FRAME_OPT_CMD, true },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd wait_frame = {
	.name = "wait",
	.about =
		"Splits every traced backend's wall time, in the kernel, at each context switch:\n"
		"time on CPU, time off CPU in each wait event (read from the backend as it\n"
		"leaves the CPU, named as pg_stat_activity names it), and time off CPU with no\n"
		"wait event set, runnable or asleep. Client:ClientRead outside a transaction is\n"
		"idle: reported apart and left out of the totals unless --include-idle.\n"
		"The transaction state and the statement are read from the backend's\n"
		"PgBackendStatus at its switches where dbtap knows the layout (PostgreSQL 15,\n"
		"16), from the USDT probes otherwise (a trap at each).\n"
		"Without a target: the only cluster.\n",
	.examples =
		"  dbtap wait --pg -d 10\n"
		"  dbtap wait --pg /var/lib/postgresql/15/main --by query --top 5 -d 30\n"
		"  dbtap wait --pg --stacks -o offcpu.svg -d 10\n",
	.opts = wait_opts,
};

/* The position of arg among names (the enum's order), -1 when it is none of them. */
static int word_index(const char *const *names, size_t n, const char *arg)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return (int)i;
	return -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct wait_cmd *c = ctx;
	int i;

	switch (key) {
	case OPT_BY:
		if ((i = word_index(by_names, sizeof(by_names) / sizeof(by_names[0]), arg)) >= 0) {
			c->by = (enum wait_by)i;
			return 0;
		}
		error("unknown --by '%s'", arg);
		hint("--by takes event, type, pid, database, user or query");
		return -1;
	case OPT_TOP:
		return top_opt(&c->top, arg, "rows");
	case OPT_SORT:
		if ((i = word_index(sort_names, sizeof(sort_names) / sizeof(sort_names[0]), arg)) >= 0) {
			c->sort = (enum wait_sort)i;
			return 0;
		}
		error("unknown --sort key '%s'", arg);
		hint("--sort takes wait_s (the default), count, mean or max");
		return -1;
	case OPT_IDLE:
		c->include_idle = true;
		return 0;
	case OPT_STACKS:
		c->stacks = true;
		return 0;
	case OPT_FLOOR:
		c->po.floor = true;
		return 0;
	case OPT_LIST:
		c->list = true;
		return 0;
	case OPT_USDT:
		c->usdt = true;
		return 0;
	case 'o':
		c->out_path = arg;
		return 0;
	}
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), n = strlen(suffix);

	return l > n && !strcmp(s + l - n, suffix);
}

static int parse_options(struct wait_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &wait_frame, argc, argv, on_opt, c);

	if (r)
		return r;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("wait takes options only; see 'dbtap wait --help'");
		return EXIT_USAGE;
	}
	if (c->out_path && !c->stacks) {
		error("-o '%s' writes stacks, and --stacks is not given", c->out_path);
		hint("add --stacks");
		return EXIT_USAGE;
	}
	if (c->out_path && !ends_with(c->out_path, ".svg") && !ends_with(c->out_path, ".folded")) {
		error("-o '%s': the stacks are written as FILE.svg or FILE.folded", c->out_path);
		hint("name the file with .svg (a flame graph) or .folded at the end");
		return EXIT_USAGE;
	}
	if (c->stacks && !c->out_path) {
		error("--stacks needs -o FILE.svg or -o FILE.folded to write them to");
		hint("e.g. --stacks -o offcpu.svg");
		return EXIT_USAGE;
	}
	return 0;
}

/* The traced processes' user, database and type, kept once seen (exited ones too). */
static struct pinfo *pinfo_get(struct wait_cmd *c, __u32 pid, const char *ktitle)
{
	struct pinfo *p = NULL;
	struct pid_label l;

	for (int i = 0; i < c->npi && !p; i++)
		if (c->pi[i].pid == pid)
			p = &c->pi[i];
	if (p && p->final)
		return p;
	if (!p) {
		p = realloc(c->pi, (c->npi + 1) * sizeof(*p));
		if (!p)
			return NULL;
		c->pi = p;
		p = &c->pi[c->npi++];
	}
	p->pid = pid;
	p->final = target_label(&c->t, pid, ktitle, ktitle ? WAIT_TITLE_LEN : 0, &l);
	snprintf(p->type, sizeof(p->type), "%s", l.type);
	snprintf(p->user, sizeof(p->user), "%s", l.user);
	snprintf(p->database, sizeof(p->database), "%s", l.database);
	return p;
}

static const char *kind_key(__u32 kind)
{
	static const char *const k[WAIT_NKINDS] = {
		"cpu", "wait", "idle", "runnable", "unlabelled", "unreadable",
	};
	return kind < WAIT_NKINDS ? k[kind] : "unknown";
}

/* Text labels of the rows that are no wait event. */
static const char *kind_label(__u32 kind)
{
	switch (kind) {
	case WAIT_KIND_CPU:
		return "on CPU";
	case WAIT_KIND_RUNNABLE:
		return "waiting for a CPU";
	case WAIT_KIND_UNLABELLED:
		return "off CPU, no wait event";
	case WAIT_KIND_UNREADABLE:
		return "wait event unreadable";
	}
	return "?";
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct wait_entry *)a)->k, &((const struct wait_entry *)b)->k,
		      sizeof(struct wait_key));
}

static struct pacc *pacc_get(struct snap *s, __u32 pid)
{
	for (int i = 0; i < s->np; i++)
		if (s->p[i].pid == pid)
			return &s->p[i];
	struct pacc *p = realloc(s->p, (s->np + 1) * sizeof(*p));
	if (!p)
		return NULL;
	s->p = p;
	p = &s->p[s->np++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void snap_free(struct snap *s)
{
	free(s->e);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

static int cmp_tid(const void *a, const void *b)
{
	__u32 x = ((const struct wait_thread_entry *)a)->tid;
	__u32 y = ((const struct wait_thread_entry *)b)->tid;

	return x < y ? -1 : x > y;
}

/* Whether no thread's stretch closed, began or ended between two reads of the threads. */
static bool threads_settled(struct wait_thread_entry *a, int na, struct wait_thread_entry *b,
			    int nb)
{
	if (na != nb)
		return false;
	qsort(a, na, sizeof(*a), cmp_tid);
	qsort(b, nb, sizeof(*b), cmp_tid);
	for (int i = 0; i < na; i++)
		if (a[i].tid != b[i].tid || a[i].t.since != b[i].t.since ||
		    a[i].t_in != b[i].t_in)
			return false;
	return true;
}

/*
 * Reads the kernel's figures and closes, on paper, the stretches still in progress. A
 * stretch that closes while the maps are read is in neither the aggregates read nor
 * the threads' open stretches (or in both): the threads are read before and after, and
 * the whole read made again while one moved, a few times at most (a backend ending
 * as the last report is made moves through its last stretches in a few milliseconds;
 * under load the gap is one stretch in thousands).
 */
#define SNAP_TRIES 8

static int snap_take(struct wait_cmd *c, struct snap *s)
{
	struct wait_thread_entry *th = NULL, *th0 = NULL;
	struct wait_proc_entry *pr = NULL;
	int nth = 0, npr = 0, nth0;

	memset(s, 0, sizeof(*s));
	for (int try = 0; try < SNAP_TRIES; try++) {
		free(th0);
		free(th);
		free(pr);
		free(s->e);
		th = NULL;
		pr = NULL;
		s->e = NULL;
		nth0 = wait_probe_read_threads(c->wp, &th0);
		s->n = wait_probe_read(c->wp, &s->e);
		npr = wait_probe_read_procs(c->wp, &pr);
		s->now = wait_probe_now();
		nth = wait_probe_read_threads(c->wp, &th);
		if (nth0 < 0 || s->n < 0 || nth < 0 || npr < 0)
			break;
		/* sorts both: th stays a complete set of threads, in tid order */
		if (threads_settled(th0, nth0, th, nth))
			break;
	}
	free(th0);
	if (s->n < 0 || nth < 0 || npr < 0) {
		free(th);
		free(pr);
		snap_free(s);
		return error("out of memory reading the wait figures");
	}
	struct wait_entry *e = realloc(s->e, (s->n + 2 * nth + 1) * sizeof(*e));
	if (!e) {
		free(th);
		free(pr);
		snap_free(s);
		return error("out of memory reading the wait figures");
	}
	s->e = e;
	for (int i = 0; i < nth; i++) {
		const struct wait_thread *t = &th[i].t;
		struct wait_entry *x = &s->e[s->n];
		uint64_t since = th[i].t_in ? th[i].t_in : t->since;
		uint64_t ns = s->now > since ? s->now - since : 0;
		if (th[i].t_in) {
			/* switched in since its entry's stretch began: that wait ended there */
			memset(x, 0, sizeof(*x));
			x->k = (struct wait_key){ .stmt = t->stmt_off, .tgid = t->tgid,
						  .kind = t->kind, .event = t->event,
						  .stack = t->stack, .ustack = t->ustack };
			x->v.ns = x->v.max_ns = th[i].t_in - t->since;
			x->v.count = 1;
			s->n++;
			x = &s->e[s->n];
		}
		memset(x, 0, sizeof(*x));
		x->k.tgid = t->tgid;
		if (t->oncpu || th[i].t_in) {
			x->k.stmt = t->stmt;
			x->k.kind = WAIT_KIND_CPU;
		} else {
			x->k.stmt = t->stmt_off;
			x->k.kind = t->kind;
			x->k.event = t->event;
			x->k.stack = t->stack;
			x->k.ustack = t->ustack;
			x->v.count = 1; /* a wait in progress is a wait */
		}
		x->v.ns = ns;
		x->v.max_ns = ns;
		s->n++;
	}
	s->n = wait_entries_merge(s->e, s->n);
	for (int i = 0; i < npr; i++) {
		struct pacc *p = pacc_get(s, pr[i].tgid);
		if (!p)
			break;
		uint64_t end = pr[i].p.last ? pr[i].p.last : s->now;
		p->wall_ns = end > pr[i].p.first ? end - pr[i].p.first : 0;
		p->exited = pr[i].p.last != 0;
		pinfo_get(c, pr[i].tgid, pr[i].p.title);
	}
	for (int i = 0; i < s->n; i++) {
		struct pacc *p = pacc_get(s, s->e[i].k.tgid);
		if (p && s->e[i].k.kind < WAIT_NKINDS)
			p->kind_ns[s->e[i].k.kind] += s->e[i].v.ns;
	}
	free(th);
	free(pr);
	return 0;
}

/* cur - prev, entry by entry (both sorted by key); the max is the whole run's. */
static void snap_delta(const struct snap *prev, struct snap *cur)
{
	int j = 0;

	for (int i = 0; i < cur->n; i++) {
		while (j < prev->n && cmp_key(&prev->e[j], &cur->e[i]) < 0)
			j++;
		if (j < prev->n && !cmp_key(&prev->e[j], &cur->e[i])) {
			cur->e[i].v.ns -= prev->e[j].v.ns < cur->e[i].v.ns ? prev->e[j].v.ns :
									      cur->e[i].v.ns;
			cur->e[i].v.count -= prev->e[j].v.count < cur->e[i].v.count ?
					     prev->e[j].v.count : cur->e[i].v.count;
		}
	}
	for (int i = 0; i < cur->np; i++) {
		for (int k = 0; k < prev->np; k++) {
			if (prev->p[k].pid != cur->p[i].pid)
				continue;
			cur->p[i].wall_ns -= prev->p[k].wall_ns < cur->p[i].wall_ns ?
					     prev->p[k].wall_ns : cur->p[i].wall_ns;
			for (int x = 0; x < WAIT_NKINDS; x++)
				cur->p[i].kind_ns[x] -= prev->p[k].kind_ns[x] < cur->p[i].kind_ns[x] ?
							prev->p[k].kind_ns[x] : cur->p[i].kind_ns[x];
		}
	}
}

/* The statement of a hash, normalized; "" outside a statement. */
static void stmt_text(struct wait_cmd *c, uint64_t stmt, char *out, size_t len)
{
	char raw[WAIT_TEXT_LEN];

	if (!stmt) {
		snprintf(out, len, "(outside a statement)");
		return;
	}
	if (wait_probe_text(c->wp, stmt, raw) < 0 || !raw[0]) {
		snprintf(out, len, "(statement text not kept)");
		return;
	}
	pg_normalize_query(raw, out, len);
}

struct rows {
	struct row *r;
	int n, cap;
};

static struct row *rows_get(struct rows *rs, const char *group, __u32 pid, __u32 kind,
			    __u32 event)
{
	for (int i = 0; i < rs->n; i++) {
		struct row *r = &rs->r[i];
		if (r->kind == kind && r->event == event && r->pid == pid && !strcmp(r->group, group))
			return r;
	}
	if (rs->n == rs->cap) {
		int cap = rs->cap ? 2 * rs->cap : 64;
		struct row *n = realloc(rs->r, cap * sizeof(*n));
		if (!n)
			return NULL;
		rs->r = n;
		rs->cap = cap;
	}
	struct row *r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->group, sizeof(r->group), "%s", group);
	r->pid = pid;
	r->kind = kind;
	r->event = event;
	return r;
}

/* Groups a snapshot's entries into report rows. */
static void rows_build(struct wait_cmd *c, const struct snap *s, struct rows *rs)
{
	for (int i = 0; i < s->n; i++) {
		const struct wait_entry *e = &s->e[i];
		char group[WAIT_TEXT_LEN * 2] = "";
		__u32 pid = 0, event = e->k.event;
		struct pinfo *pi;

		if (!e->v.ns && !e->v.count)
			continue;
		switch (c->by) {
		case WBY_EVENT:
			break;
		case WBY_TYPE:
			/* one row per class: the event id's bits dropped */
			event &= 0xff000000u;
			break;
		case WBY_PID:
			pid = e->k.tgid;
			break;
		case WBY_DATABASE:
		case WBY_USER:
			pi = pinfo_get(c, e->k.tgid, NULL);
			snprintf(group, sizeof(group), "%s",
				 !pi ? "" : c->by == WBY_USER ? pi->user : pi->database);
			if (!group[0])
				snprintf(group, sizeof(group), "(%s)", pi ? pi->type : "unknown");
			break;
		case WBY_QUERY:
			stmt_text(c, e->k.stmt, group, sizeof(group));
			break;
		}
		struct row *r = rows_get(rs, group, pid, e->k.kind, event);
		if (!r)
			break;
		r->ns += e->v.ns;
		r->count += e->v.count;
		if (e->v.max_ns > r->max_ns)
			r->max_ns = e->v.max_ns;
	}
}

/* qsort has no context: the --sort key of the one report being made. */
static enum wait_sort sort_key;

/* A row's or group's figure for --sort; the mean as ns per wait, 0 without one. */
static double sort_value(uint64_t ns, uint64_t count, uint64_t max_ns)
{
	switch (sort_key) {
	case WSORT_COUNT:
		return (double)count;
	case WSORT_MEAN:
		return count ? (double)ns / count : 0.0;
	case WSORT_MAX:
		return (double)max_ns;
	case WSORT_WAIT:
		break;
	}
	return (double)ns;
}

/* Largest first by the --sort key, then by time and group so the order is stable. */
static int cmp_figures(uint64_t xns, uint64_t xc, uint64_t xm, uint64_t yns, uint64_t yc,
		       uint64_t ym)
{
	double a = sort_value(xns, xc, xm), b = sort_value(yns, yc, ym);

	if (a != b)
		return a > b ? -1 : 1;
	if (xns != yns)
		return xns > yns ? -1 : 1;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int r = cmp_figures(x->ns, x->count, x->max_ns, y->ns, y->count, y->max_ns);

	return r ? r : strcmp(x->group, y->group);
}

static void row_names(struct wait_cmd *c, const struct row *r, struct pg_wait_name *n)
{
	if (r->kind == WAIT_KIND_WAIT || r->kind == WAIT_KIND_IDLE) {
		pg_wait_event_name(c->major, r->event ? r->event : 0x01000000u, n);
		if (c->by == WBY_TYPE)
			n->event[0] = '\0';
	} else {
		snprintf(n->type, sizeof(n->type), "%s", r->kind == WAIT_KIND_CPU ? "CPU" : "-");
		snprintf(n->event, sizeof(n->event), "%s", kind_label(r->kind));
		n->known = true;
	}
}

/* A row's keys: the group's (with idle rows, flat), then the wait's. */
static void json_row(struct wait_cmd *c, struct json *j, const struct row *r, bool group_keys,
		     uint64_t total_ns, bool summary)
{
	struct pg_wait_name nm;
	bool is_wait = r->kind == WAIT_KIND_WAIT || r->kind == WAIT_KIND_IDLE;

	row_names(c, r, &nm);
	json_object_begin(j, NULL);
	if (group_keys && c->by == WBY_PID) {
		struct pinfo *pi = pinfo_get(c, r->pid, NULL);
		json_int(j, "pid", r->pid);
		json_str(j, "type", pi ? pi->type : NULL);
	} else if (group_keys && c->by >= WBY_DATABASE) {
		json_str(j, by_names[c->by], r->group[0] ? r->group : NULL);
	}
	json_str(j, "kind", kind_key(r->kind));
	json_str(j, "wait_event_type", is_wait ? nm.type : NULL);
	if (c->by != WBY_TYPE)
		json_str(j, "wait_event", is_wait && nm.event[0] ? nm.event : NULL);
	json_double(j, "wait_s", r->ns / 1e9);
	json_uint(j, "wait_ns", r->ns);
	if (r->kind != WAIT_KIND_IDLE || c->include_idle)
		json_double(j, "share_pct", total_ns ? 100.0 * r->ns / total_ns : 0.0);
	json_uint(j, "count", r->count);
	if (r->count)
		json_double(j, "mean_us", r->ns / 1e3 / r->count);
	else
		json_null(j, "mean_us");
	if (summary) {
		if (r->count)
			json_double(j, "max_us", r->max_ns / 1e3);
		else
			json_null(j, "max_us");
	}
	json_object_end(j);
}

static bool same_group(const struct wait_cmd *c, const struct row *a, const struct row *b)
{
	return c->by == WBY_PID ? a->pid == b->pid : !strcmp(a->group, b->group);
}

/* A group of rows (--by pid|database|user|query): its totals and where its rows are. */
struct group {
	int first; /* the group's first row; rows sorted by group */
	uint64_t ns, count, max_ns;
};

static int cmp_row_group(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int r;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	r = strcmp(x->group, y->group);
	if (r)
		return r;
	return cmp_figures(x->ns, x->count, x->max_ns, y->ns, y->count, y->max_ns);
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int r = cmp_figures(x->ns, x->count, x->max_ns, y->ns, y->count, y->max_ns);

	return r ? r : x->first - y->first;
}

/* Sorts rows by group, then by time; returns the groups, the largest total first. */
static int groups_make(struct wait_cmd *c, struct rows *rs, struct group **out)
{
	struct group *g = calloc(rs->n + 1, sizeof(*g));
	int ng = 0;

	*out = g;
	if (!g)
		return 0;
	if (rs->n)
		qsort(rs->r, rs->n, sizeof(*rs->r), cmp_row_group);
	for (int i = 0; i < rs->n; i++) {
		if (!ng || !same_group(c, &rs->r[g[ng - 1].first], &rs->r[i]))
			g[ng++].first = i;
		g[ng - 1].ns += rs->r[i].ns;
		g[ng - 1].count += rs->r[i].count;
		if (rs->r[i].max_ns > g[ng - 1].max_ns)
			g[ng - 1].max_ns = rs->r[i].max_ns;
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	return ng;
}

static void json_pacc(struct json *j, const struct pacc *p)
{
	json_bool(j, "exited", p->exited);
	json_uint(j, "wall_ns", p->wall_ns);
	json_uint(j, "cpu_ns", p->kind_ns[WAIT_KIND_CPU]);
	json_uint(j, "wait_ns", p->kind_ns[WAIT_KIND_WAIT]);
	json_uint(j, "idle_ns", p->kind_ns[WAIT_KIND_IDLE]);
	json_uint(j, "runnable_ns", p->kind_ns[WAIT_KIND_RUNNABLE]);
	json_uint(j, "unlabelled_ns", p->kind_ns[WAIT_KIND_UNLABELLED]);
	json_uint(j, "unreadable_ns", p->kind_ns[WAIT_KIND_UNREADABLE]);
}

static void json_process_keys(struct wait_cmd *c, struct json *j, __u32 pid)
{
	struct pinfo *pi = pinfo_get(c, pid, NULL);

	json_int(j, "pid", pid);
	json_str(j, "type", pi ? pi->type : NULL);
	json_str(j, "user", pi && pi->user[0] ? pi->user : NULL);
	json_str(j, "database", pi && pi->database[0] ? pi->database : NULL);
}

static const struct pacc *pacc_find(const struct snap *s, __u32 pid)
{
	for (int i = 0; i < s->np; i++)
		if (s->p[i].pid == pid)
			return &s->p[i];
	return NULL;
}

static void json_report(struct wait_cmd *c, const struct frame_report *fr, struct snap *cur,
			struct rows *rs, struct rows *idle, uint64_t total_ns, uint64_t idle_ns,
			const struct wait_drops *d)
{
	static const char *const arrays[] = { [WBY_PID] = "processes", [WBY_DATABASE] = "databases",
					      [WBY_USER] = "users", [WBY_QUERY] = "statements" };
	bool summary = fr->kind == FRAME_SUMMARY;
	struct json j;

	json_init(&j);
	frame_json_begin(&j, fr);
	json_str(&j, "by", by_names[c->by]);
	json_str(&j, "sort", sort_names[c->sort]);
	json_uint(&j, "backend_ns", total_ns);
	json_uint(&j, "idle_ns", idle_ns);
	json_bool(&j, "idle_included", c->include_idle);
	if (c->by == WBY_EVENT || c->by == WBY_TYPE) {
		int n = rs->n < c->top ? rs->n : c->top;
		json_array_begin(&j, "waits");
		for (int i = 0; i < n; i++)
			json_row(c, &j, &rs->r[i], false, total_ns, summary);
		json_array_end(&j);
		json_int(&j, "rows", rs->n);
	}
	if (!c->include_idle) {
		json_array_begin(&j, "idle");
		for (int i = 0; i < idle->n; i++)
			json_row(c, &j, &idle->r[i], true, 0, summary);
		json_array_end(&j);
	}
	if (c->by == WBY_PID || c->by >= WBY_DATABASE) {
		struct group *g;
		int ng = groups_make(c, rs, &g), n = ng < c->top ? ng : c->top;
		json_array_begin(&j, arrays[c->by]);
		for (int k = 0; k < n; k++) {
			const struct row *r0 = &rs->r[g[k].first];
			json_object_begin(&j, NULL);
			if (c->by == WBY_PID) {
				const struct pacc *p = pacc_find(cur, r0->pid);
				json_process_keys(c, &j, r0->pid);
				if (p)
					json_pacc(&j, p);
			} else {
				json_str(&j, by_names[c->by], r0->group[0] ? r0->group : NULL);
			}
			json_uint(&j, "total_ns", g[k].ns);
			json_array_begin(&j, "waits");
			for (int i = g[k].first; i < rs->n && same_group(c, r0, &rs->r[i]); i++)
				json_row(c, &j, &rs->r[i], false, total_ns, summary);
			json_array_end(&j);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_int(&j, "groups", ng);
		free(g);
	}
	if (c->by != WBY_PID) {
		json_array_begin(&j, "processes");
		for (int i = 0; i < cur->np; i++) {
			json_object_begin(&j, NULL);
			json_process_keys(c, &j, cur->p[i].pid);
			json_pacc(&j, &cur->p[i]);
			json_object_end(&j);
		}
		json_array_end(&j);
	}
	json_object_begin(&j, "dropped");
	json_uint(&j, "aggregates_full", d->aggs_full);
	json_uint(&j, "threads_full", d->threads_full);
	json_uint(&j, "texts_full", d->texts_full);
	if (c->stacks)
		json_uint(&j, "stacks_lost", d->stacks_lost);
	json_object_end(&j);
	/* the program's runs (context switches) that involved a traced thread */
	json_object_begin(&j, "program");
	json_uint(&j, "traced_switches", d->switches);
	json_uint(&j, "unpaired_switches", d->unpaired);
	json_object_end(&j);
	json_object_end(&j);
	json_flush_line(&j, stdout);
	json_release(&j);
}

static void text_rows(struct wait_cmd *c, struct row *r, int n, uint64_t total_ns, bool summary)
{
	const char *gh = c->by == WBY_PID ? "PID" : c->by == WBY_DATABASE ? "DATABASE" :
			 c->by == WBY_USER ? "USER" : NULL;
	int w = 10;

	for (int i = 0; i < n; i++) {
		struct pg_wait_name nm;
		row_names(c, &r[i], &nm);
		if (r[i].kind == WAIT_KIND_WAIT || r[i].kind == WAIT_KIND_IDLE)
			w = frame_width(w, nm.type);
	}
	if (gh)
		printf("%-10s ", gh);
	printf("%-*s %-24s %9s %6s %8s %9s %9s%s\n", w, "TYPE", "EVENT", "SECONDS", "SHARE",
	       "COUNT", "MEAN_MS", summary ? "MAX_MS" : "", c->by == WBY_QUERY ? "  QUERY" : "");
	for (int i = 0; i < n; i++) {
		struct pg_wait_name nm;
		char mean[16] = "-", max[16] = "-", cnt[24] = "-", share[16] = "-";
		row_names(c, &r[i], &nm);
		if (r[i].count) {
			snprintf(cnt, sizeof(cnt), "%" PRIu64, r[i].count);
			snprintf(mean, sizeof(mean), "%.3f", r[i].ns / 1e6 / r[i].count);
			snprintf(max, sizeof(max), "%.3f", r[i].max_ns / 1e6);
		}
		if (r[i].kind != WAIT_KIND_IDLE && total_ns)
			snprintf(share, sizeof(share), "%.1f%%", 100.0 * r[i].ns / total_ns);
		if (c->by == WBY_PID)
			printf("%-10u ", r[i].pid);
		else if (gh)
			printf("%-10.10s ", r[i].group);
		printf("%-*s %-24.*s %9.3f %6s %8s %9s %9s", w, nm.type,
		       24, nm.event,
		       r[i].ns / 1e9, share, cnt, mean, summary ? max : "");
		if (c->by == WBY_QUERY)
			printf("  %.60s", r[i].group);
		printf("\n");
	}
}

static void report(void *ctx, const struct frame_report *fr)
{
	struct wait_cmd *c = ctx;
	bool summary = fr->kind == FRAME_SUMMARY;
	struct snap cur;
	struct rows rs = { 0 }, idle = { 0 };
	struct wait_drops d;
	uint64_t total_ns = 0, idle_ns = 0;
	int nproc = 0, m = 0;

	if (snap_take(c, &cur) < 0)
		return;
	sort_key = c->sort;
	if (!summary) {
		struct snap keep = cur;
		/* the cumulative figures, for the next interval's differences */
		keep.e = malloc((cur.n ? cur.n : 1) * sizeof(*cur.e));
		keep.p = malloc((cur.np ? cur.np : 1) * sizeof(*cur.p));
		if (keep.e && keep.p) {
			memcpy(keep.e, cur.e, cur.n * sizeof(*cur.e));
			memcpy(keep.p, cur.p, cur.np * sizeof(*cur.p));
		}
		if (c->prev.e || c->prev.p)
			snap_delta(&c->prev, &cur);
		snap_free(&c->prev);
		c->prev = keep;
	}
	rows_build(c, &cur, &rs);
	/* idle rows apart, unless counted */
	for (int i = 0; i < rs.n; i++) {
		if (rs.r[i].kind == WAIT_KIND_IDLE) {
			idle_ns += rs.r[i].ns;
			if (!c->include_idle) {
				struct row *r = rows_get(&idle, rs.r[i].group, rs.r[i].pid,
							 rs.r[i].kind, rs.r[i].event);
				if (r)
					*r = rs.r[i];
				rs.r[i].ns = 0;
				rs.r[i].count = 0;
				continue;
			}
		}
		total_ns += rs.r[i].ns;
	}
	for (int i = 0; i < rs.n; i++)
		if (rs.r[i].ns || rs.r[i].count)
			rs.r[m++] = rs.r[i];
	rs.n = m;
	/* an empty set has no array at all: qsort is not given NULL */
	if (rs.n)
		qsort(rs.r, rs.n, sizeof(*rs.r), cmp_row);
	if (idle.n)
		qsort(idle.r, idle.n, sizeof(*idle.r), cmp_row);
	for (int i = 0; i < cur.np; i++)
		nproc += cur.p[i].wall_ns > 0;
	wait_probe_drops(c->wp, &d);
	/* for bench/wait-switch.sh, not a figure of the report: on stderr, the summary's */
	if (c->po.self_time && fr->kind == FRAME_SUMMARY)
		fprintf(stderr, "{\"wait_self_time\":{\"untraced_runs\":%llu,\"untraced_ns\":%llu,"
			"\"traced_runs\":%llu,\"traced_ns\":%llu}}\n",
			(unsigned long long)d.self_runs[0], (unsigned long long)d.self_ns[0],
			(unsigned long long)d.self_runs[1], (unsigned long long)d.self_ns[1]);

	if (global.json) {
		json_report(c, fr, &cur, &rs, &idle, total_ns, idle_ns, &d);
	} else {
		int ntop = rs.n < c->top ? rs.n : c->top;
		frame_text_head(stdout, fr);
		printf("%d processes, %.3f s of their time", nproc, total_ns / 1e9);
		if (c->include_idle)
			printf(" (idle %.3f s included)\n", idle_ns / 1e9);
		else
			printf("; idle %.3f s apart, not counted\n", idle_ns / 1e9);
		text_rows(c, rs.r, ntop, total_ns, summary);
		if (rs.n > ntop)
			printf("(%d more rows; --top N shows more)\n", rs.n - ntop);
		if (!c->include_idle && idle.n && summary) {
			printf("idle (Client:ClientRead outside a transaction), not in the totals:\n");
			text_rows(c, idle.r, idle.n < c->top ? idle.n : c->top, 0, summary);
		}
		if (d.aggs_full || d.threads_full || d.texts_full)
			printf("dropped: %" PRIu64 " stretches (aggregate map full), %" PRIu64
			       " thread switches (thread map full), %" PRIu64 " statement texts\n",
			       (uint64_t)d.aggs_full, (uint64_t)d.threads_full, (uint64_t)d.texts_full);
	}
	free(rs.r);
	free(idle.r);
	snap_free(&cur);
}

/* The processes traced now, to seed: the cluster's or the -p list. */
static int current_pids(struct wait_cmd *c, pid_t **out)
{
	if (c->t.kind == TARGET_PG) {
		pg_cluster_refresh_procs(&c->t.pg);
		*out = calloc(c->t.pg.nprocs + 1, sizeof(**out));
		if (!*out)
			return -1;
		for (int i = 0; i < c->t.pg.nprocs; i++)
			(*out)[i] = c->t.pg.procs[i].pid;
		return c->t.pg.nprocs;
	}
	*out = calloc(c->t.npids + 1, sizeof(**out));
	if (!*out)
		return -1;
	memcpy(*out, c->t.pids, c->t.npids * sizeof(**out));
	return c->t.npids;
}

/*
 * Threads already running when tracing starts: each is entered as on CPU or waiting
 * in the wait event it shows now, so its time is accounted from the start.
 */
static void seed(struct wait_cmd *c)
{
	pid_t *pids;
	int n = current_pids(c, &pids);

	/* the run's clock and the accounting start together: wall times are the run's */
	wait_probe_start(c->wp, c->f.rl.start_ns);
	for (int i = 0; i < n; i++) {
		/* -t: the one thread (a backend's is its pid); otherwise each main thread */
		pid_t tid = c->t.kind == TARGET_TID ? c->t.tid : pids[i];
		uint64_t ptr = 0;
		uint32_t ev = 0;
		int st = proc_state(tid);
		if (st < 0)
			continue;
		struct proc_counters pc;
		if (mem_read_u64(pids[i], c->po.ptr_addr, &ptr) < 0 || !ptr ||
		    mem_read(pids[i], ptr + c->po.field_off, &ev, sizeof(ev)) < 0)
			ev = 0;
		bool in_xact = wait_probe_backend_busy(&c->po, pids[i]);
		/* a running thread's schedstat lags by its current slice: only asleep ones */
		if (st != 'R' && proc_counters(tid, &pc) == 0)
			wait_probe_seed_exec(c->wp, tid, pids[i], ev, in_xact, pc.run_ns);
		else
			wait_probe_seed(c->wp, tid, pids[i], st == 'R', ev, in_xact);
	}
	free(pids);
}

/*
 * Where the backends' PgBackendStatus rows are (pg/layout.c): found, wait reads the
 * transaction state and the statement at the switches; not, it traps at the USDT
 * probes as before, and says why with -v.
 */
static void bestatus_locate(struct wait_cmd *c, pid_t ref)
{
	struct pg_bestatus b;
	uint8_t track = 1;

	if (c->usdt) {
		verbose("statements and transactions: USDT probes (--usdt)");
		return;
	}
	if (wait_probe_opts_bestatus(&c->po, c->major, c->po.binary, ref, &b) < 0) {
		verbose("statements and transactions: USDT probes (%s)", b.why);
		return;
	}
	verbose("statements and transactions: *MyBEEntry st_state +%u,"
		" st_activity_start_timestamp +%u, st_activity_raw +%u (%s); BackendState"
		" idle %u running %u idle_in_transaction %u fastpath %u"
		" idle_in_transaction_aborted %u disabled %u",
		b.loc.state_off, b.loc.activity_ts_off, b.loc.activity_off,
		b.loc.from_dwarf ? "debug info" : "layout table", b.loc.st_idle, b.loc.st_running,
		b.loc.st_idle_xact, b.loc.st_fastpath, b.loc.st_idle_xact_aborted,
		b.loc.st_disabled);
	/* the server's setting, as its backends inherit it (a session may SET it) */
	if (mem_read(ref, b.track_addr, &track, sizeof(track)) == 0 && !track) {
		warning("track_activities is off: no transaction state, every Client:ClientRead"
			" counts as idle, and statements are told apart by their text alone");
		hint("set track_activities = on (the default) for idle in transaction to be counted");
	}
}

/* Finds the wait event word of the target (pg/layout.c): the same in every pid. */
static int locate(struct wait_cmd *c)
{
	struct pg_wait_word w;
	pid_t *pids = NULL;
	pid_t ref = c->t.kind == TARGET_PG ? c->t.pg.postmaster : c->t.pids[0];
	int ret = EXIT_FAIL;

	if (pg_wait_word_find(c->major, c->po.binary, ref, &w) < 0)
		return EXIT_FAIL;
	int n = current_pids(c, &pids);
	for (int i = 0; c->t.kind == TARGET_PIDS && i < n; i++) {
		uint64_t b;
		if (proc_load_bias(pids[i], c->po.binary, &b) < 0 || b != w.bias) {
			error("pid %d does not belong to the same server as pid %d", pids[i], ref);
			hint("trace one cluster at a time: --pg TARGET, or -p with its backends");
			goto out;
		}
	}
	c->po.ptr_addr = w.ptr_addr;
	c->po.field_off = w.field_off;
	verbose("wait event: *%s + %u (%s), at 0x%" PRIx64, w.loc.symbol, w.field_off,
		w.loc.from_dwarf ? "debug info" : "layout table", c->po.ptr_addr);
	bestatus_locate(c, ref);
	ret = 0;
out:
	free(pids);
	return ret;
}

#define STACK_MAX 127

/* One off-CPU stretch's stacks, root first: the wait, the user stack, the kernel stack. */
static int stack_add(struct wait_cmd *c, struct stack_set *ss, const struct wait_entry *e)
{
	uint64_t ips[STACK_MAX];
	uint32_t f[2 * STACK_MAX + 2];
	struct sym_frame sf;
	char root[128];
	int n = 0, k;

	if (e->k.kind == WAIT_KIND_WAIT || e->k.kind == WAIT_KIND_IDLE) {
		struct pg_wait_name nm;
		pg_wait_event_name(c->major, e->k.event, &nm);
		snprintf(root, sizeof(root), "%s:%s", nm.type, nm.event);
	} else {
		snprintf(root, sizeof(root), "%s", kind_label(e->k.kind));
	}
	f[n++] = stack_set_frame(ss, root, STACK_GROUP);
	if (!e->k.stack && !e->k.ustack)
		f[n++] = stack_set_frame(ss, "[stack lost]", STACK_MARK);
	k = wait_probe_stack(c->wp, e->k.ustack, ips, STACK_MAX);
	for (int i = k - 1; i >= 0; i--) {
		symbolizer_user(c->sym, e->k.tgid, ips[i], i > 0, &sf);
		f[n++] = stack_set_frame(ss, sf.name, sf.kind == SYM_UNNAMED ? STACK_UNNAMED :
					 sf.kind == SYM_JIT ? STACK_JIT : STACK_USER);
	}
	k = wait_probe_stack(c->wp, e->k.stack, ips, STACK_MAX);
	/* the leaf frames are the tracepoint's and the program's own: not the wait's */
	int skip = 0;
	while (skip < k) {
		symbolizer_kernel(c->sym, ips[skip], skip > 0, &sf);
		if (strncmp(sf.name, "bpf_", 4) && strncmp(sf.name, "__bpf_", 6) &&
		    strncmp(sf.name, "__traceiter_", 12))
			break;
		skip++;
	}
	for (int i = k - 1; i >= skip; i--) {
		symbolizer_kernel(c->sym, ips[i], i > 0, &sf);
		f[n++] = stack_set_frame(ss, sf.name, STACK_KERNEL);
	}
	for (int i = 0; i < n; i++)
		if (f[i] == UINT32_MAX)
			return -1;
	/* microseconds: a folded count is an integer, and ns would overflow nothing but read badly */
	return stack_set_add(ss, f, n, (e->v.ns + 500) / 1000);
}

/* --stacks: the off-CPU flame graph (or folded stacks) of the whole run. */
static int stacks_write(struct wait_cmd *c)
{
	struct stack_set ss;
	struct snap s;
	FILE *f;
	int ret = -1;

	if (snap_take(c, &s) < 0)
		return -1;
	stack_set_init(&ss);
	for (int i = 0; i < s.n; i++) {
		const struct wait_entry *e = &s.e[i];
		if (e->k.kind == WAIT_KIND_CPU || e->k.kind == WAIT_KIND_RUNNABLE ||
		    (e->k.kind == WAIT_KIND_IDLE && !c->include_idle) || e->v.ns < 500)
			continue;
		if (stack_add(c, &ss, e) < 0)
			goto out;
	}
	f = fopen(c->out_path, "w");
	if (!f) {
		error_errno("cannot write '%s'", c->out_path);
		hint("check that the directory exists and can be written");
		goto out;
	}
	if (ends_with(c->out_path, ".folded")) {
		ret = folded_write(&ss, f);
	} else {
		char sub[256];
		snprintf(sub, sizeof(sub), "%s, %.1f s; off-CPU time in microseconds, the wait event"
			 " at the root", target_describe(&c->t), frame_time_s(&c->f));
		struct flame_opts fo = { .title = "Off-CPU time by wait event", .subtitle = sub,
					 .unit = "us" };
		ret = flame_write_svg(&ss, f, &fo);
	}
	if (fclose(f) || ret < 0) {
		error_errno("cannot write '%s'", c->out_path);
		hint("check the free space of its file system");
		ret = -1;
		goto out;
	}
	fprintf(stderr, "wrote %s: %zu stacks, %.3f s off CPU\n", c->out_path, ss.n, ss.total / 1e6);
out:
	stack_set_free(&ss);
	snap_free(&s);
	return ret;
}

/* --list-events: the table of the server's version, id by id. */
static int list_events(struct wait_cmd *c)
{
	int n = 0;

	if (!pg_wait_names_known(c->major)) {
		error("dbtap has no wait event names for PostgreSQL %d", c->major);
		hint("the versions it has are 12 to 18; wait shows other versions' events as"
		     " class and id");
		return EXIT_FAIL;
	}
	if (!global.json)
		printf("%-12s %-16s %s\n", "ID", "TYPE", "EVENT");
	const struct pg_wait_names *t = pg_wait_names_for(c->major);
	for (uint32_t cls = 0; cls < PG_WAIT_CLASSES; cls++) {
		for (uint32_t id = 0; id < (uint32_t)t->cls[cls].n; id++) {
			struct pg_wait_name nm;
			uint32_t info = cls << 24 | id;
			if (!t->cls[cls].names[id])
				continue;
			pg_wait_event_name(c->major, info, &nm);
			n++;
			if (global.json) {
				struct json j;
				json_init(&j);
				frame_json_begin_kind(&j, "wait_event", 0);
				json_uint(&j, "wait_event_info", info);
				json_str(&j, "wait_event_type", nm.type);
				json_str(&j, "wait_event", nm.event);
				json_object_end(&j);
				json_flush_line(&j, stdout);
				json_release(&j);
			} else {
				printf("0x%08x   %-16s %s\n", info, nm.type, nm.event);
			}
		}
	}
	if (!global.json)
		fprintf(stderr, "%d wait events of PostgreSQL %d\n", n, c->major);
	return EXIT_OK;
}

/* After the summary: detach and free; safe twice (error paths, then the frame). */
static void cleanup(void *ctx)
{
	struct wait_cmd *c = ctx;

	if (c->attached && c->out_path && c->sym)
		stacks_write(c);
	symbolizer_free(c->sym);
	c->sym = NULL;
	wait_probe_destroy(c->wp);
	c->wp = NULL;
	snap_free(&c->prev);
	free(c->pi);
	c->pi = NULL;
	c->npi = 0;
	target_free(&c->t);
}

int cmd_wait(int argc, char **argv)
{
	struct wait_cmd c = { .top = 20 };
	const struct frame_ops ops = {
		.report = report,
		.teardown = cleanup,
		.teardown_what = "detaching the probes",
	};
	int ret;

	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	c.po.self_time = getenv("DBTAP_WAIT_SELF_TIME") != NULL;
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true;
	ret = target_resolve(&c.t, &c.f.to, true);
	if (ret)
		return ret;
	if (c.t.kind == TARGET_PG) {
		c.major = c.t.pg.major;
		c.po.binary = c.t.pg.binary;
	} else {
		c.major = pg_major_of_process(c.t.pids[0]);
		c.po.binary = c.t.binary;
		for (int i = 0; i < c.t.npids; i++) {
			if (pg_major_of_process(c.t.pids[i]) < 0) {
				error("pid %d is not a PostgreSQL server process", c.t.pids[i]);
				hint("wait traces PostgreSQL backends: give their pids, or --pg");
				ret = EXIT_USAGE;
				goto fail;
			}
		}
	}
	if (!c.po.binary) {
		error("cannot find the server binary of %s", target_describe(&c.t));
		hint("run as root so /proc/PID/exe can be read");
		ret = EXIT_FAIL;
		goto fail;
	}
	if (c.list) {
		ret = list_events(&c);
		goto fail;
	}
	if (!pg_wait_names_known(c.major))
		warning("dbtap has no wait event names for PostgreSQL %d: events are shown as"
			" class and id", c.major);
	ret = locate(&c);
	if (ret)
		goto fail;
	c.po.target = &c.t;
	c.po.major = c.major;
	c.po.stacks = c.stacks;
	c.po.idle_event = pg_wait_event_lookup(c.major, "Client", "ClientRead");
	if (!c.po.idle_event)
		c.po.idle_event = 0x06000000u; /* the first Client event in every version known */
	c.wp = wait_probe_open(&c.po);
	if (!c.wp) {
		ret = EXIT_FAIL;
		goto fail;
	}
	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	c.f.target = &c.t;
	frame_start(&c.f);
	seed(&c);
	if (c.stacks) {
		pid_t *pids;
		int n = current_pids(&c, &pids);
		c.sym = symbolizer_new();
		for (int i = 0; c.sym && i < n; i++)
			symbolizer_add_pid(c.sym, pids[i]);
		/* backends forked later have the postmaster's layout (no exec) */
		if (c.sym && c.t.kind == TARGET_PG)
			symbolizer_set_fallback(c.sym, c.t.pg.postmaster);
		else if (c.sym)
			symbolizer_set_fallback(c.sym, c.t.pids[0]);
		free(pids);
	}
	if (wait_probe_attach(c.wp) < 0) {
		ret = EXIT_FAIL;
		goto fail;
	}
	c.attached = true;
	if (c.po.bestatus.beentry_addr)
		fprintf(stderr, "tracing waits in %s (sched_switch; statements from"
			" PgBackendStatus, no USDT probe); Ctrl-C to stop\n", target_describe(&c.t));
	else
		fprintf(stderr, "tracing waits in %s (%d probes); Ctrl-C to stop\n",
			target_describe(&c.t), wait_probe_nlinks(c.wp));
	return frame_run(&c.f, &ops, &c);
fail:
	cleanup(&c);
	return ret;
}
