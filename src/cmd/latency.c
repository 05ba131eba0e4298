/* dbtap latency: time between two probes per thread, or per statement (latency query). */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/bestatus.h"
#include "bpf/latency.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "pg/layout.h"
#include "pg/probes.h"
#include "report/hist.h"
#include "target/label.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/runloop.h"

/* One statement text (normalized unless --raw-query) and its times. */
struct stmt {
	char *text;
	uint64_t count, total_ns, max_ns;
};

/*
 * A process's label, learnt at the first poll that saw it: the kernel keeps no title
 * here, and a backend that exits before the report would be "exited".
 */
struct pid_seen {
	__u32 pid;
	bool final;
	struct pid_label l;
};

/* Per (thread, pair) figures at the previous report, for interval splits. */
struct prev_thread {
	struct lat_key k;
	uint64_t count, sum_ns;
};

enum stmt_sort { SORT_TOTAL, SORT_MEAN, SORT_MAX, SORT_COUNT };

struct lat_cmd {
	struct frame f;
	struct target t;
	struct hist_spec spec;
	bool hist_given, query, raw;
	bool usdt;                  /* --usdt: the probe pair, where PgBackendStatus could be read */
	bool bestatus;              /* query through PgBackendStatus (the default on 15, 16) */
	struct bestatus_cfg bcfg;
	struct probe abort;         /* bestatus: transaction__abort, failed statements */
	struct probe_list abort_list;
	enum by by;
	enum stmt_sort sort;
	int top;
	const char *labels[2 * LAT_MAX_PAIRS];
	struct probe starts[LAT_MAX_PAIRS], ends[LAT_MAX_PAIRS];
	struct probe_list lists[2 * LAT_MAX_PAIRS];
	int npairs;
	struct lat_probe *lp;
	struct lat_hist prev[LAT_MAX_PAIRS];
	struct lat_hist *cur, *d;
	struct hist *h;
	struct stmt *stmts;
	int nstmts;
	struct hashmap stmt_of_text; /* normalized text -> index in stmts */
	uint64_t stmt_other;
	struct prev_thread *prev_threads; /* sorted by key */
	int nprev;
	struct pid_seen *seen; /* labels learnt while the processes lived, sorted by pid */
	int nseen;
};

enum { OPT_HIST = FRAME_KEY_LONG, OPT_TOP, OPT_SORT, OPT_RAW, OPT_BY, OPT_USDT };

static const struct frame_opt lat_opts[] = {
	FRAME_OPTS_TARGET,
	FRAME_OPTS_TIME,
	{ "by", OPT_BY, required_argument, "pid|type|database|user|query",
	  "split the times by process, backend type, database, user;\n"
	  "query: by statement (latency query, its default)" },
	{ "hist", OPT_HIST, required_argument, "SPEC",
	  "log2 (default) or linear:MIN:MAX:STEP, in microseconds" },
	{ "top", OPT_TOP, required_argument, "N", "statements listed by latency query (default 10)" },
	{ "sort", OPT_SORT, required_argument, "total|mean|max|count",
	  "which statements --top keeps, largest first (default total)" },
	{ "raw-query", OPT_RAW, no_argument, NULL, "statement texts as sent, literals included" },
	{ "usdt", OPT_USDT, no_argument, NULL,
	  "latency query: the statements from the USDT probes (a trap each)\n"
	  "instead of the backends' PgBackendStatus (15 and 16 have it)" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd lat_frame = {
	.name = "latency",
	.args = "START END [START END...]",
	.more = "dbtap latency query [--pg [TARGET] | -p PID] [--top N] [--sort KEY] [--raw-query] ...",
	.about =
		"Measures the time from START to END on the same thread, in the kernel, as a\n"
		"histogram with p50/p90/p99/max (within 1.6 % of the true values).\n\n"
		"START and END are probes: usdt:[BINARY:]PROVIDER:NAME, uprobe:BINARY:FUNCTION,\n"
		"uretprobe:BINARY:FUNCTION (a function's duration: uprobe:B:F uretprobe:B:F).\n"
		"A START without its END on the thread is replaced by the thread's next START.\n\n"
		"latency query: each statement's time per backend, and the statements with the\n"
		"most total time, their literals shown as $1, $2... (raw texts can carry secrets;\n"
		"--raw-query shows them as sent). On PostgreSQL 15 and 16 it reads the backend's\n"
		"own pg_stat_activity row when the backend leaves the CPU (state_change -\n"
		"query_start, no trap); --usdt, and other versions, time query__start ->\n"
		"query__done (the simple query protocol only, a trap at each).\n",
	.examples =
		"  dbtap latency --pg query -d 10\n"
		"  dbtap latency --pg query --top 5 --sort mean\n"
		"  dbtap latency --pg uprobe:postgres:pg_plan_query uretprobe:postgres:pg_plan_query\n"
		"  dbtap latency --pg usdt:postgresql:lock__wait__start usdt:postgresql:lock__wait__done\n",
	.opts = lat_opts,
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct lat_cmd *c = ctx;
	static const char *const sorts[] = { "total", "mean", "max", "count" };

	switch (key) {
	case OPT_HIST:
		if (hist_spec_parse(arg, &c->spec) < 0)
			return -1;
		c->hist_given = true;
		return 0;
	case OPT_TOP:
		return top_opt(&c->top, arg, "statements");
	case OPT_SORT:
		for (unsigned i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++) {
			if (!strcmp(arg, sorts[i])) {
				c->sort = i;
				return 0;
			}
		}
		error("bad --sort '%s'", arg);
		hint("--sort total (time summed), mean, max or count");
		return -1;
	case OPT_RAW:
		c->raw = true;
		return 0;
	case OPT_BY:
		return by_opt(&c->by, arg, BY_PID | BY_TYPE | BY_DATABASE | BY_USER | BY_QUERY);
	case OPT_USDT:
		c->usdt = true;
		return 0;
	}
	return -1;
}

static int parse_options(struct lat_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &lat_frame, argc, argv, on_opt, c);

	if (r)
		return r;
	if (optind >= argc) {
		error("latency needs START and END probes, or 'query'");
		hint("e.g. 'dbtap latency --pg query', 'dbtap latency uprobe:BIN:F uretprobe:BIN:F';"
		     " see 'dbtap latency --help'");
		return EXIT_USAGE;
	}
	return 0;
}

/* Resolves one side of a pair to exactly one probe. */
static int resolve_one(struct lat_cmd *c, const char *text, const char *binary, int slot,
		       struct probe *out)
{
	struct probespec s;
	struct probe_list *l = &c->lists[slot];
	int ret = probespec_parse(text, &s);

	if (!ret)
		ret = probespec_resolve(&s, binary, 64, l);
	probespec_free(&s);
	if (ret)
		return ret;
	if (l->n != 1) {
		error("'%s' matches %d probes; START and END name one probe each", text, l->n);
		hint("write the name out in full, without wildcards");
		return EXIT_USAGE;
	}
	*out = l->p[0];
	return 0;
}

static int setup_pairs(struct lat_cmd *c, int argc, char **argv, const char *binary)
{
	int n = argc - optind, ret;

	if (n % 2) {
		error("START '%s' has no END", argv[argc - 1]);
		hint("give probes in pairs: START END [START END...]");
		return EXIT_USAGE;
	}
	if (n / 2 > LAT_MAX_PAIRS) {
		error("%d pairs given, at most %d are allowed", n / 2, LAT_MAX_PAIRS);
		hint("run several dbtap latency commands");
		return EXIT_USAGE;
	}
	for (int i = 0; i < n / 2; i++) {
		c->labels[2 * i] = argv[optind + 2 * i];
		c->labels[2 * i + 1] = argv[optind + 2 * i + 1];
		ret = resolve_one(c, argv[optind + 2 * i], binary, 2 * i, &c->starts[i]);
		if (!ret)
			ret = resolve_one(c, argv[optind + 2 * i + 1], binary, 2 * i + 1, &c->ends[i]);
		if (ret)
			return ret;
	}
	c->npairs = n / 2;
	return 0;
}

/*
 * Whether the statements can be read from the backends' PgBackendStatus rows
 * (pg/layout.c knows the version's layout, the binary exports MyBEEntry, and the
 * server tracks activities); says which path and why with -v.
 */
static bool bestatus_choose(struct lat_cmd *c, const char *binary)
{
	pid_t ref = c->t.kind == TARGET_PG ? c->t.pg.postmaster : c->t.pids[0];
	int major = c->t.kind == TARGET_PG ? c->t.pg.major : pg_major_of_process(ref);
	struct pg_bestatus b;
	char why[160];

	if (c->usdt) {
		verbose("statements: USDT probes (--usdt)");
		return false;
	}
	if (bestatus_cfg_find(&c->bcfg, &b, major, binary, ref, why, sizeof(why)) < 0) {
		verbose("statements: USDT probes (%s)", why);
		return false;
	}
	verbose("statements: *MyBEEntry st_changecount +%u, st_procpid +%u,"
		" st_xact_start_timestamp +%u, st_activity_start_timestamp +%u,"
		" st_state_start_timestamp +%u, st_proc_start_timestamp +%u, st_state +%u,"
		" st_activity_raw +%u (%s)",
		b.loc.changecount_off, b.loc.procpid_off, b.loc.xact_ts_off,
		b.loc.activity_ts_off, b.loc.state_ts_off, b.loc.proc_ts_off, b.loc.state_off,
		b.loc.activity_off,
		b.loc.from_dwarf ? "debug info" : "layout table");
	return true;
}

static int setup_query(struct lat_cmd *c, int argc, char **argv, const char *binary)
{
	const struct pg_probes *names;
	char s[512], e[512];
	int ret;

	if (argc - optind > 1) {
		error("unexpected argument '%s' after 'query'", argv[optind + 1]);
		hint("latency query takes options only; see 'dbtap latency --help'");
		return EXIT_USAGE;
	}
	names = pg_probes_for(c->t.kind == TARGET_PG ? c->t.pg.major : 0);
	if (!names || !binary) {
		error("latency query needs a PostgreSQL server");
		hint("use --pg, or -p with a backend's pid");
		return EXIT_USAGE;
	}
	c->npairs = 1;
	c->query = true;
	if (bestatus_choose(c, binary)) {
		struct probespec ps;

		c->bestatus = true;
		/* pg_stat_activity's names for the two ends */
		c->labels[0] = "query_start";
		c->labels[1] = "state_change";
		snprintf(s, sizeof(s), "usdt:%s:%s:%s", binary, names->provider, names->txn_abort);
		ret = probespec_parse(s, &ps);
		if (!ret)
			ret = probespec_resolve(&ps, binary, 64, &c->abort_list);
		probespec_free(&ps);
		if (!ret && c->abort_list.n != 1) {
			error("'%s' matches %d probes", s, c->abort_list.n);
			hint("latency query --usdt takes the statement probes instead");
			ret = EXIT_FAIL;
		}
		if (!ret)
			c->abort = c->abort_list.p[0];
		return ret;
	}
	snprintf(s, sizeof(s), "usdt:%s:%s:%s", binary, names->provider, names->query_start);
	snprintf(e, sizeof(e), "usdt:%s:%s:%s", binary, names->provider, names->query_done);
	c->labels[0] = names->query_start;
	c->labels[1] = names->query_done;
	ret = resolve_one(c, s, binary, 0, &c->starts[0]);
	if (!ret)
		ret = resolve_one(c, e, binary, 1, &c->ends[0]);
	return ret;
}

/* Adds one kernel statement key to the statement with the same (normalized) text. */
static int stmt_merge(struct lat_cmd *c, const struct lat_stmt_entry *e)
{
	char text[LAT_TEXT_LEN * 2];
	struct stmt *s = NULL;

	if (c->raw)
		snprintf(text, sizeof(text), "%s", e->text);
	else
		pg_normalize_query(e->text, text, sizeof(text));
	uint64_t idx;
	if (hashmap_get_str(&c->stmt_of_text, text, &idx)) {
		s = &c->stmts[idx];
	} else {
		if (c->nstmts >= LAT_MAX_STMTS)
			return 0; /* cannot happen: at most one statement per key */
		if (hashmap_put_str(&c->stmt_of_text, text, c->nstmts))
			return -1;
		s = &c->stmts[c->nstmts++];
		memset(s, 0, sizeof(*s));
		s->text = strdup(text);
		if (!s->text)
			return -1;
	}
	s->count += e->s.count;
	s->total_ns += e->s.sum_ns;
	if (e->s.max_ns > s->max_ns)
		s->max_ns = e->s.max_ns;
	return 0;
}

/*
 * The kernel keys statements by a literal-blind hash (or, with --raw-query, the exact
 * text) and keeps one sample text per key; here the samples are normalized and keys
 * that normalize equal become one statement.
 */
static int stmts_collect(struct lat_cmd *c)
{
	struct lat_stmt_entry *v;
	int n = lat_probe_read_stmts(c->lp, &v);

	if (n < 0)
		return error("out of memory reading the statements");
	if (!c->stmts) {
		c->stmts = calloc(LAT_MAX_STMTS, sizeof(*c->stmts));
		if (!c->stmts) {
			free(v);
			return error("out of memory reading the statements");
		}
	}
	for (int i = 0; i < c->nstmts; i++)
		free(c->stmts[i].text);
	c->nstmts = 0;
	hashmap_free(&c->stmt_of_text);
	for (int i = 0; i < n; i++)
		if (stmt_merge(c, &v[i]) < 0)
			break;
	free(v);
	return 0;
}

static double stmt_sort_key(const struct stmt *x, enum stmt_sort sort)
{
	switch (sort) {
	case SORT_MEAN:
		return x->count ? (double)x->total_ns / x->count : 0;
	case SORT_MAX:
		return x->max_ns;
	case SORT_COUNT:
		return x->count;
	case SORT_TOTAL:
		break;
	}
	return x->total_ns;
}

static enum stmt_sort sort_for_qsort;

static int cmp_stmt(const void *a, const void *b)
{
	const struct stmt *x = a, *y = b;
	double kx = stmt_sort_key(x, sort_for_qsort), ky = stmt_sort_key(y, sort_for_qsort);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void pair_summary(struct lat_cmd *c, const struct lat_hist *d, struct hist_summary *s)
{
	memcpy(c->h->counts, d->ll, sizeof(d->ll));
	c->h->count = d->count;
	c->h->sum = d->sum_ns;
	hist_summarize(c->h, s);
}

/* One split row: a thread's pair, or a type/database/user's pair with its threads summed. */
struct split {
	struct lat_key k;
	__u32 pid;
	struct pid_label l;
	uint64_t count, sum_ns;
};

static int cmp_prev(const void *a, const void *b)
{
	const struct prev_thread *x = a, *y = b;

	if (x->k.tid != y->k.tid)
		return x->k.tid < y->k.tid ? -1 : 1;
	return x->k.pair < y->k.pair ? -1 : x->k.pair > y->k.pair;
}

static int cmp_split(const void *a, const void *b)
{
	const struct split *x = a, *y = b;

	if (x->k.pair != y->k.pair)
		return x->k.pair < y->k.pair ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->k.tid < y->k.tid ? -1 : x->k.tid > y->k.tid;
}

static int cmp_seen(const void *a, const void *b)
{
	const struct pid_seen *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The label of pid: the one learnt while it lived, else asked now (and kept). */
static void label_of(struct lat_cmd *c, __u32 pid, struct pid_label *out)
{
	struct pid_seen key = { .pid = pid }, *p = NULL, *v;

	if (c->nseen)
		p = bsearch(&key, c->seen, c->nseen, sizeof(key), cmp_seen);
	if (p && p->final) {
		*out = p->l;
		return;
	}
	bool final = target_label(&c->t, pid, NULL, 0, out);
	if (p) {
		/* an exited process keeps what was learnt while it lived */
		if (!strcmp(out->type, "exited"))
			*out = p->l;
		else
			*p = (struct pid_seen){ pid, final, *out };
		return;
	}
	if (!strcmp(out->type, "exited") || !(v = realloc(c->seen, (c->nseen + 1) * sizeof(*v))))
		return;
	c->seen = v;
	v[c->nseen++] = (struct pid_seen){ pid, final, *out };
	qsort(v, c->nseen, sizeof(*v), cmp_seen);
}

/* Every poll: learn the labels of processes that appeared, while they live. */
static bool poll_labels(void *ctx)
{
	struct lat_cmd *c = ctx;
	struct lat_key *k = NULL;
	struct lat_thread *v = NULL;
	struct pid_label l;
	int n = lat_probe_read_threads(c->lp, &k, &v);

	for (int i = 0; i < n; i++)
		label_of(c, v[i].tgid, &l);
	free(k);
	free(v);
	return true;
}

/*
 * The per-thread figures since the previous report (summary: since the start), split
 * by c->by (BY_PID, or by when it groups; rows with nothing in the span left out).
 */
static int collect_splits(struct lat_cmd *c, bool summary, enum by by, struct split **out)
{
	struct lat_key *k = NULL;
	struct lat_thread *v = NULL;
	int n = lat_probe_read_threads(c->lp, &k, &v), ns = 0;
	struct split *s = calloc(n > 0 ? n : 1, sizeof(*s));

	*out = s;
	if (!s || n < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		uint64_t cnt = v[i].count, sum = v[i].sum_ns;
		struct pid_label l;

		if (!summary && c->nprev) {
			struct prev_thread key = { .k = k[i] }, *pv;
			pv = bsearch(&key, c->prev_threads, c->nprev, sizeof(key), cmp_prev);
			/* an entry the LRU map dropped and made again starts from zero */
			if (pv && pv->count <= cnt && pv->sum_ns <= sum) {
				cnt -= pv->count;
				sum -= pv->sum_ns;
			}
		}
		if (!cnt)
			continue;
		label_of(c, v[i].tgid, &l);
		if (by != BY_PID) {
			int j;
			for (j = 0; j < ns; j++)
				if (s[j].k.pair == k[i].pair &&
				    !strcmp(by_label(&s[j].l, by), by_label(&l, by)))
					break;
			if (j < ns) {
				s[j].count += cnt;
				s[j].sum_ns += sum;
				continue;
			}
		}
		s[ns] = (struct split){ .k = k[i], .pid = v[i].tgid, .l = l, .count = cnt, .sum_ns = sum };
		ns++;
	}
	if (!summary) {
		struct prev_thread *pt = realloc(c->prev_threads, (n > 0 ? n : 1) * sizeof(*pt));
		if (pt) {
			c->prev_threads = pt;
			for (int i = 0; i < n; i++)
				pt[i] = (struct prev_thread){ k[i], v[i].count, v[i].sum_ns };
			c->nprev = n;
			qsort(pt, n, sizeof(*pt), cmp_prev);
		} else {
			warning("out of memory: the next interval's split covers the run so far");
			c->nprev = 0;
		}
	}
	free(k);
	free(v);
	if (s)
		qsort(s, ns, sizeof(*s), cmp_split);
	return ns;
}

static double mean_us(uint64_t sum_ns, uint64_t count)
{
	return count ? sum_ns / 1000.0 / count : NAN;
}

static void json_splits(struct json *j, enum by by, const struct split *s, int ns)
{
	json_array_begin(j, by_array(by));
	for (int i = 0; i < ns; i++) {
		json_object_begin(j, NULL);
		if (by == BY_PID) {
			json_int(j, "pid", s[i].pid);
			if (s[i].k.tid != s[i].pid)
				json_int(j, "tid", s[i].k.tid);
			json_str(j, "type", s[i].l.type);
			json_str(j, "user", s[i].l.user[0] ? s[i].l.user : NULL);
			json_str(j, "database", s[i].l.database[0] ? s[i].l.database : NULL);
		} else {
			const char *v = by_label(&s[i].l, by);
			json_str(j, by_name(by), v[0] ? v : NULL);
		}
		json_int(j, "pair", s[i].k.pair);
		json_uint(j, "count", s[i].count);
		json_double(j, "mean_us", mean_us(s[i].sum_ns, s[i].count));
		json_object_end(j);
	}
	json_array_end(j);
}

static void text_splits(struct lat_cmd *c, enum by by, const struct split *s, int ns)
{
	int w = 4;
	char head[16];

	for (int i = 0; i < ns; i++)
		w = frame_width(w, by == BY_PID ? s[i].l.type : by_label(&s[i].l, by));
	snprintf(head, sizeof(head), "%s", by == BY_PID ? "type" : by_name(by));
	for (char *p = head; *p; p++)
		*p = toupper((unsigned char)*p);
	if (by == BY_PID)
		printf("  %8s %-*s", "PID", w, head);
	else
		printf("  %-*s", w, head);
	printf(" %4s %10s %12s\n", "PAIR", "COUNT", "MEAN_US");
	for (int i = 0; i < ns; i++) {
		const char *v = by == BY_PID ? s[i].l.type : by_label(&s[i].l, by);
		if (by == BY_PID)
			printf("  %8u %-*s", s[i].k.tid, w, v);
		else
			printf("  %-*s", w, v[0] ? v : "-");
		printf(" %4u %10" PRIu64 " %12.1f\n", s[i].k.pair, s[i].count,
		       mean_us(s[i].sum_ns, s[i].count));
	}
}

static void report(void *ctx, const struct frame_report *r)
{
	struct lat_cmd *c = ctx;
	bool summary = r->kind == FRAME_SUMMARY;
	double secs = r->span_s;
	int pending = lat_probe_pending(c->lp);
	enum by split_by = c->by == BY_QUERY ? BY_NONE : c->by;
	struct split *sp = NULL, *procs = NULL;
	int nsp = 0, nprocs = 0;
	struct json j;

	if (split_by != BY_NONE)
		nsp = collect_splits(c, summary, split_by, &sp);
	/* the summary lists the processes always */
	if (summary && split_by != BY_PID)
		nprocs = collect_splits(c, true, BY_PID, &procs);
	if (global.json) {
		json_init(&j);
		frame_json_begin(&j, r);
		json_int(&j, "pending", pending);
		if (c->query)
			json_str(&j, "statements_from", c->bestatus ? "pg_backend_status" : "usdt");
		json_array_begin(&j, "pairs");
	} else {
		frame_text_head(stdout, r);
		if (summary)
			printf("\n");
	}

	for (int i = 0; i < c->npairs; i++) {
		struct hist_summary s;
		struct lat_hist *d = c->d;

		if (lat_probe_read(c->lp, i, c->cur) < 0)
			continue;
		if (summary) {
			*d = *c->cur;
		} else {
			d->count = c->cur->count - c->prev[i].count;
			d->sum_ns = c->cur->sum_ns - c->prev[i].sum_ns;
			d->unmatched = c->cur->unmatched - c->prev[i].unmatched;
			d->dropped = c->cur->dropped - c->prev[i].dropped;
			d->untracked = c->cur->untracked - c->prev[i].untracked;
			d->at_exit = c->cur->at_exit - c->prev[i].at_exit;
			d->looks = c->cur->looks - c->prev[i].looks;
			d->commits = c->cur->commits - c->prev[i].commits;
			d->aborts = c->cur->aborts - c->prev[i].aborts;
			for (unsigned b = 0; b < LL_BUCKETS; b++)
				d->ll[b] = c->cur->ll[b] - c->prev[i].ll[b];
			for (unsigned b = 0; b < DISP_SLOTS; b++)
				d->disp[b] = c->cur->disp[b] - c->prev[i].disp[b];
			c->prev[i] = *c->cur;
		}
		pair_summary(c, d, &s);
		if (global.json) {
			/* nothing timed: null, not a 0 nobody measured */
			double none = s.count ? 0 : NAN;
			json_object_begin(&j, NULL);
			json_str(&j, "start", c->labels[2 * i]);
			json_str(&j, "end", c->labels[2 * i + 1]);
			json_uint(&j, "count", s.count);
			json_double(&j, "rate", secs > 0 ? s.count / secs : 0.0);
			json_uint(&j, "unmatched_ends", d->unmatched);
			json_double(&j, "mean_us", s.mean / 1000.0 + none);
			json_double(&j, "p50_us", s.p50 / 1000.0 + none);
			json_double(&j, "p90_us", s.p90 / 1000.0 + none);
			json_double(&j, "p99_us", s.p99 / 1000.0 + none);
			json_double(&j, "max_us", s.max / 1000.0 + none);
			if (c->query)
				json_uint(&j, "dropped", d->dropped);
			if (c->bestatus) {
				json_uint(&j, "backends_untracked", d->untracked);
				json_uint(&j, "counted_at_exit", d->at_exit);
				json_uint(&j, "switches_looked", d->looks);
				json_uint(&j, "transactions", d->commits);
				json_uint(&j, "transaction_aborts", d->aborts);
			}
			hist_json(&j, "hist", &c->spec, (const uint64_t *)d->disp, "us");
			json_object_end(&j);
		} else {
			/* pairs after the first line up under it, past the interval's stamp */
			printf("%*s%s -> %s  count %" PRIu64 "  %.1f/s  us: mean %.1f p50 %.1f p90 %.1f "
			       "p99 %.1f max %.1f\n", summary ? 2 : i ? 11 : 0, "", c->labels[2 * i],
			       c->labels[2 * i + 1], s.count, secs > 0 ? s.count / secs : 0.0,
			       s.mean / 1e3, s.p50 / 1e3, s.p90 / 1e3, s.p99 / 1e3, s.max / 1e3);
			if (summary || c->hist_given)
				hist_print(stdout, &c->spec, (const uint64_t *)d->disp, "us");
			if (c->query && d->dropped)
				printf("  %" PRIu64 " statements not listed: the statement map was full"
				       " (%d keys)\n", (uint64_t)d->dropped, LAT_MAX_STMTS);
		}
	}

	int ntop = 0;
	if (summary && c->query) {
		/* the pair's cumulative figures were just read: these are its statements */
		c->stmt_other = c->cur->dropped;
		if (stmts_collect(c) < 0)
			c->nstmts = 0;
		sort_for_qsort = c->sort;
		qsort(c->stmts, c->nstmts, sizeof(*c->stmts), cmp_stmt);
		ntop = c->nstmts < c->top ? c->nstmts : c->top;
	}
	if (global.json) {
		json_array_end(&j);
		if (sp)
			json_splits(&j, split_by, sp, nsp);
		if (summary && split_by != BY_PID)
			json_splits(&j, BY_PID, procs, nprocs);
		if (summary && c->query) {
			json_array_begin(&j, "statements");
			for (int i = 0; i < ntop; i++) {
				const struct stmt *s = &c->stmts[i];
				json_object_begin(&j, NULL);
				json_str(&j, "query", s->text);
				json_uint(&j, "count", s->count);
				json_double(&j, "total_us", s->total_ns / 1000.0);
				json_double(&j, "mean_us", mean_us(s->total_ns, s->count));
				json_double(&j, "max_us", s->max_ns / 1000.0);
				json_object_end(&j);
			}
			json_array_end(&j);
			json_int(&j, "statements_count", c->nstmts);
			json_uint(&j, "statements_not_grouped", c->stmt_other);
		}
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		if (nsp)
			text_splits(c, split_by, sp, nsp);
		if (ntop) {
			static const char *const sorts[] = { "total time", "mean time", "max time",
							     "count" };
			printf("statements by %s (%s):\n", sorts[c->sort],
			       c->raw ? "as sent" : "literals as $n");
			printf("%9s %11s %10s %10s  %s\n", "COUNT", "TOTAL_MS", "MEAN_MS", "MAX_MS", "QUERY");
			for (int i = 0; i < ntop; i++) {
				const struct stmt *s = &c->stmts[i];
				printf("%9" PRIu64 " %11.3f %10.3f %10.3f  %.60s\n", s->count,
				       s->total_ns / 1e6, s->total_ns / 1e6 / s->count, s->max_ns / 1e6,
				       s->text);
			}
		}
	}
	free(sp);
	free(procs);
}

/* After the summary: detach and free; safe twice (error paths, then the frame). */
static void cleanup(void *ctx)
{
	struct lat_cmd *c = ctx;

	lat_probe_destroy(c->lp);
	c->lp = NULL;
	for (int i = 0; i < 2 * LAT_MAX_PAIRS; i++)
		probe_list_free(&c->lists[i]);
	probe_list_free(&c->abort_list);
	for (int i = 0; i < c->nstmts; i++)
		free(c->stmts[i].text);
	c->nstmts = 0;
	free(c->stmts);
	hashmap_free(&c->stmt_of_text);
	free(c->cur);
	free(c->d);
	free(c->h);
	free(c->prev_threads);
	free(c->seen);
	c->seen = NULL;
	c->nseen = 0;
	c->stmts = NULL;
	c->cur = c->d = NULL;
	c->h = NULL;
	c->prev_threads = NULL;
	target_free(&c->t);
}

int cmd_latency(int argc, char **argv)
{
	struct lat_cmd c = { .top = 10 };
	struct lat_probe_opts po = { 0 };
	const struct frame_ops ops = {
		.report = report,
		.poll = poll_labels,
		.teardown = cleanup,
		.teardown_what = "detaching the probes",
	};
	const char *binary;
	int ret;

	c.spec.kind = DISP_LOG2;
	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	bool query = !strcmp(argv[optind], "query");
	if (c.usdt && !query) {
		error("--usdt needs 'latency query'");
		hint("START END pairs name their probes themselves");
		return EXIT_USAGE;
	}
	if (c.by == BY_QUERY && !query) {
		error("--by query needs 'latency query'");
		hint("use --by pid, type, database or user with START END pairs");
		return EXIT_USAGE;
	}
	if (query && !c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true;
	ret = target_resolve(&c.t, &c.f.to, false);
	if (ret)
		return ret;
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	ret = query ? setup_query(&c, argc, argv, binary) : setup_pairs(&c, argc, argv, binary);
	if (ret)
		goto fail;

	po.target = &c.t;
	po.hist = &c.spec;
	po.starts = c.starts;
	po.ends = c.ends;
	po.npairs = c.npairs;
	po.query = c.query;
	po.raw = c.raw;
	if (c.bestatus) {
		po.bestatus = &c.bcfg;
		po.abort = &c.abort;
	}
	c.lp = lat_probe_open(&po);
	if (!c.lp) {
		ret = EXIT_FAIL;
		goto fail;
	}
	c.cur = calloc(1, sizeof(*c.cur));
	c.d = calloc(1, sizeof(*c.d));
	c.h = calloc(1, sizeof(*c.h));
	if (!c.cur || !c.d || !c.h) {
		error("out of memory");
		ret = EXIT_FAIL;
		goto fail;
	}

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	c.f.target = &c.t;
	frame_start(&c.f);
	if (c.bestatus)
		fprintf(stderr, "tracing statements in %s from PgBackendStatus at each switch-out"
			" (failed ones at transaction__abort; %d attachments); Ctrl-C to stop\n",
			target_describe(&c.t), lat_probe_nlinks(c.lp));
	else
		fprintf(stderr, "tracing %d pair%s in %s (%d probe sites); Ctrl-C to stop\n",
			c.npairs, c.npairs == 1 ? "" : "s", c.t.kind == TARGET_NONE ?
			"every process" : target_describe(&c.t), lat_probe_nlinks(c.lp));
	return frame_run(&c.f, &ops, &c);
fail:
	cleanup(&c);
	return ret;
}
