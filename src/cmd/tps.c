/* dbtap tps: transactions per second and transaction/cycle times, per interval and per backend. */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/tps.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "pg/cluster.h"
#include "report/hist.h"
#include "target/label.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/runloop.h"

/* What dbtap knows about one backend, and its counters at the previous report. */
struct backend_info {
	__u32 tid, tgid;
	__u64 born;
	char type[64], user[64], database[64];
	bool typed;
	struct tps_backend prev;
};

struct tps_cmd {
	struct frame f;
	struct target t;
	enum by by;
	bool hist_given;
	struct hist_spec spec;
	struct tps_probe *probe;
	struct tps_totals *prev, *cur;
	struct hist *h;
	struct backend_info *bi;
	int nbi;
	struct hashmap bi_of_tid; /* thread id -> index in bi */
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_PER_BACKEND, OPT_HIST };

static const struct frame_opt tps_opts[] = {
	FRAME_OPTS_TARGET,
	FRAME_OPTS_TIME,
	{ "by", OPT_BY, required_argument, "pid|type|database|user",
	  "each interval split by process (pid, type, user, database,\n"
	  "TPS, times), backend type, database or user" },
	{ "per-backend", OPT_PER_BACKEND, no_argument, NULL, "--by pid (deprecated spelling)",
	  FRAME_OPT_CMD, true },
	{ "hist", OPT_HIST, required_argument, "SPEC",
	  "log2 (default) or linear:MIN:MAX:STEP, in microseconds" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd tps_frame = {
	.name = "tps",
	.about =
		"Counts PostgreSQL transactions from its transaction__start/commit/abort USDT\n"
		"probes in every process of the cluster, backends that connect later included.\n"
		"Aggregation happens in the kernel; dbtap reads the maps once per interval.\n\n"
		"Two times are measured per backend:\n"
		"  transaction time  start -> commit/abort (histogram with p50/p90/p99/max,\n"
		"                    within 1.6 % of the true value)\n"
		"  cycle time        start -> next start on the same backend: what a closed-loop\n"
		"                    client such as pgbench reports as its latency\n",
	.examples =
		"  dbtap tps -i 1                         cluster TPS every second\n"
		"  dbtap tps --by pid -d 10               per connection over 10 seconds\n"
		"  dbtap tps --by database -i 5           per database every 5 seconds\n"
		"  dbtap tps --hist linear:0:1000:50 -i 5 SystemTap-style histogram\n",
	.opts = tps_opts,
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct tps_cmd *c = ctx;

	switch (key) {
	case OPT_BY:
		return by_opt(&c->by, arg, BY_PID | BY_TYPE | BY_DATABASE | BY_USER);
	case OPT_PER_BACKEND:
		c->by = BY_PID;
		return 0;
	case OPT_HIST:
		if (hist_spec_parse(arg, &c->spec) < 0)
			return -1;
		c->hist_given = true;
		return 0;
	}
	return -1;
}

static int parse_options(struct tps_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &tps_frame, argc, argv, on_opt, c);

	if (r)
		return r;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("tps takes options only; see 'dbtap tps --help'");
		return EXIT_USAGE;
	}
	return 0;
}

static void fill_info(struct tps_cmd *c, struct backend_info *bi, const struct tps_backend *b)
{
	struct pid_label l;

	/* The title the kernel saw first survives the backend's exit. */
	bi->typed = target_label(&c->t, bi->tgid, b->title, sizeof(b->title), &l);
	snprintf(bi->type, sizeof(bi->type), "%s", l.type);
	snprintf(bi->user, sizeof(bi->user), "%s", l.user);
	snprintf(bi->database, sizeof(bi->database), "%s", l.database);
}

static struct backend_info *info_find(struct tps_cmd *c, __u32 tid)
{
	uint64_t i;

	return hashmap_get_u64(&c->bi_of_tid, tid, &i) ? &c->bi[i] : NULL;
}

/*
 * Makes sure every backend of e has its info (found by thread id through c->bi_of_tid:
 * a busy server has thousands), typing those not typed yet. -1 when out of memory.
 */
static int info_update(struct tps_cmd *c, const struct tps_backend_entry *e, int n)
{
	for (int i = 0; i < n; i++) {
		struct backend_info *bi = info_find(c, e[i].tid);

		if (bi && bi->born != e[i].b.born) {
			/* The thread id now belongs to another backend: start over. */
			memset(bi, 0, sizeof(*bi));
			bi->tid = e[i].tid;
			bi->tgid = e[i].b.tgid;
			bi->born = e[i].b.born;
		}
		if (bi) {
			if (!bi->typed)
				fill_info(c, bi, &e[i].b);
			continue;
		}
		struct backend_info *nv = realloc(c->bi, (c->nbi + 1) * sizeof(*c->bi));
		if (!nv)
			return -1;
		c->bi = nv;
		if (hashmap_put_u64(&c->bi_of_tid, e[i].tid, c->nbi))
			return -1;
		bi = &c->bi[c->nbi++];
		memset(bi, 0, sizeof(*bi));
		bi->tid = e[i].tid;
		bi->tgid = e[i].b.tgid;
		bi->born = e[i].b.born;
		fill_info(c, bi, &e[i].b);
	}
	return 0;
}

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

/* NaN when nothing was timed: JSON prints null and text "-", never a made-up 0. */
static double mean_us(uint64_t ns, uint64_t n)
{
	return n ? (double)ns / (double)n / 1000.0 : NAN;
}

/* us as milliseconds with 3 decimals, or "-" for NaN. */
static const char *ms_str(char *buf, size_t len, double us)
{
	if (isnan(us))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", us / 1000.0);
	return buf;
}

struct row {
	struct backend_info *bi;
	struct tps_backend d; /* over the report's span */
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bi->tgid != y->bi->tgid)
		return x->bi->tgid < y->bi->tgid ? -1 : 1;
	return x->bi->tid < y->bi->tid ? -1 : x->bi->tid > y->bi->tid;
}

/*
 * Per-backend figures since the previous report (summary: since the start), sorted by
 * pid. Backends without any event in the span are left out.
 */
static int collect_rows(struct tps_cmd *c, bool summary, struct row **out)
{
	struct tps_backend_entry *e = NULL;
	int n = tps_probe_read_backends(c->probe, &e), nr = 0;
	struct row *rows = calloc(n > 0 ? n : 1, sizeof(*rows));

	if (!rows) {
		free(e);
		*out = NULL;
		return 0;
	}
	/* Learn every backend first: that may move c->bi, and rows point into it. */
	if (info_update(c, e, n)) {
		error("out of memory");
		free(e);
		free(rows);
		*out = NULL;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		struct backend_info *bi = info_find(c, e[i].tid);
		const struct tps_backend *now = &e[i].b;
		struct tps_backend d = *now;

		/* An entry the LRU map evicted and made again starts from zero. */
		if (now->starts < bi->prev.starts || now->commits < bi->prev.commits ||
		    now->aborts < bi->prev.aborts || now->cycles < bi->prev.cycles)
			memset(&bi->prev, 0, sizeof(bi->prev));
		if (!summary) {
			d.starts -= bi->prev.starts;
			d.commits -= bi->prev.commits;
			d.aborts -= bi->prev.aborts;
			d.timed -= bi->prev.timed;
			d.txn_ns -= bi->prev.txn_ns;
			d.cycles -= bi->prev.cycles;
			d.cycle_ns -= bi->prev.cycle_ns;
			bi->prev = *now;
		}
		if (!d.starts && !d.commits && !d.aborts)
			continue;
		rows[nr].bi = bi;
		rows[nr].d = d;
		nr++;
	}
	free(e);
	qsort(rows, nr, sizeof(*rows), cmp_row);
	*out = rows;
	return nr;
}

static void summary_of(struct tps_cmd *c, const struct tps_totals *d, struct hist_summary *s)
{
	memcpy(c->h->counts, d->ll, sizeof(d->ll));
	c->h->count = d->txn_count;
	c->h->sum = d->txn_ns;
	hist_summarize(c->h, s);
}

static void delta_totals(struct tps_totals *d, const struct tps_totals *now, const struct tps_totals *before)
{
	d->starts = now->starts - before->starts;
	d->commits = now->commits - before->commits;
	d->aborts = now->aborts - before->aborts;
	d->txn_count = now->txn_count - before->txn_count;
	d->txn_ns = now->txn_ns - before->txn_ns;
	d->cycles = now->cycles - before->cycles;
	d->cycle_ns = now->cycle_ns - before->cycle_ns;
	for (unsigned i = 0; i < LL_BUCKETS; i++)
		d->ll[i] = now->ll[i] - before->ll[i];
	for (unsigned i = 0; i < DISP_SLOTS; i++)
		d->disp[i] = now->disp[i] - before->disp[i];
}

/* Rows summed by type, database or user: one group per distinct name, by commits. */
struct group {
	const char *name;
	struct tps_backend d;
};

static const char *group_name(const struct backend_info *bi, enum by by)
{
	const char *v = by == BY_TYPE ? bi->type : by == BY_DATABASE ? bi->database : bi->user;

	return v[0] ? v : "-";
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->d.commits != y->d.commits)
		return x->d.commits > y->d.commits ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int group_rows(const struct row *rows, int nr, enum by by, struct group **out)
{
	struct group *g = calloc(nr > 0 ? nr : 1, sizeof(*g));
	int ng = 0;

	*out = g;
	if (!g)
		return 0;
	for (int i = 0; i < nr; i++) {
		const char *name = group_name(rows[i].bi, by);
		int k;
		for (k = 0; k < ng && strcmp(g[k].name, name); k++)
			;
		if (k == ng)
			g[ng++].name = name;
		g[k].d.starts += rows[i].d.starts;
		g[k].d.commits += rows[i].d.commits;
		g[k].d.aborts += rows[i].d.aborts;
		g[k].d.timed += rows[i].d.timed;
		g[k].d.txn_ns += rows[i].d.txn_ns;
		g[k].d.cycles += rows[i].d.cycles;
		g[k].d.cycle_ns += rows[i].d.cycle_ns;
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	return ng;
}

static void json_figures(struct json *j, const struct tps_backend *d, double secs)
{
	json_uint(j, "starts", d->starts);
	json_uint(j, "commits", d->commits);
	json_uint(j, "aborts", d->aborts);
	json_double(j, "tps", per_s(d->commits, secs));
	json_double(j, "txn_mean_us", mean_us(d->txn_ns, d->timed));
	json_uint(j, "cycles", d->cycles);
	json_double(j, "cycle_mean_us", mean_us(d->cycle_ns, d->cycles));
}

static void json_rows(struct json *j, const struct row *rows, int nr, double secs)
{
	json_array_begin(j, "processes");
	for (int i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		json_object_begin(j, NULL);
		json_int(j, "pid", r->bi->tgid);
		if (r->bi->tid != r->bi->tgid)
			json_int(j, "tid", r->bi->tid);
		json_str(j, "type", r->bi->type);
		json_str(j, "user", r->bi->user[0] ? r->bi->user : NULL);
		json_str(j, "database", r->bi->database[0] ? r->bi->database : NULL);
		json_figures(j, &r->d, secs);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_groups(struct json *j, enum by by, const struct group *g, int ng, double secs)
{
	json_array_begin(j, by_array(by));
	for (int i = 0; i < ng; i++) {
		json_object_begin(j, NULL);
		json_str(j, by_name(by), strcmp(g[i].name, "-") ? g[i].name : NULL);
		json_figures(j, &g[i].d, secs);
		json_object_end(j);
	}
	json_array_end(j);
}

static void text_figures(const struct tps_backend *d, double secs)
{
	char txn[32], cyc[32];

	printf(" %9.1f %8" PRIu64 " %6" PRIu64 " %9s %9s\n", per_s(d->commits, secs),
	       (uint64_t)d->commits, (uint64_t)d->aborts,
	       ms_str(txn, sizeof(txn), mean_us(d->txn_ns, d->timed)),
	       ms_str(cyc, sizeof(cyc), mean_us(d->cycle_ns, d->cycles)));
}

#define TEXT_FIGURES_HEAD " %9s %8s %6s %9s %9s\n", "TPS", "COMMITS", "ABORTS", "TXN_MS", "CYCLE_MS"

static void text_rows(const struct row *rows, int nr, double secs)
{
	int wt = 4, wu = 4, wd = 8;

	for (int i = 0; i < nr; i++) {
		wt = frame_width(wt, rows[i].bi->type);
		wu = frame_width(wu, rows[i].bi->user);
		wd = frame_width(wd, rows[i].bi->database);
	}
	printf("%8s %-*s %-*s %-*s", "PID", wt, "TYPE", wu, "USER", wd, "DATABASE");
	printf(TEXT_FIGURES_HEAD);
	for (int i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		printf("%8u %-*s %-*s %-*s", r->bi->tid, wt, r->bi->type, wu,
		       r->bi->user[0] ? r->bi->user : "-", wd, r->bi->database[0] ? r->bi->database : "-");
		text_figures(&r->d, secs);
	}
}

static void text_groups(enum by by, const struct group *g, int ng, double secs)
{
	char head[16];
	int w = 8;

	for (int i = 0; i < ng; i++)
		w = frame_width(w, g[i].name);
	snprintf(head, sizeof(head), "%s", by_name(by));
	for (char *p = head; *p; p++)
		*p = toupper((unsigned char)*p);
	printf("%-*s", w, head);
	printf(TEXT_FIGURES_HEAD);
	for (int i = 0; i < ng; i++) {
		printf("%-*s", w, g[i].name);
		text_figures(&g[i].d, secs);
	}
}

/*
 * Nothing counted with -p naming a postmaster: it runs no transactions itself, its
 * backends do, and -p leaves them out. Said on stderr, as watch says it.
 */
static void hint_postmaster_pid(const struct tps_cmd *c)
{
	if (c->t.kind != TARGET_PIDS)
		return;
	for (int i = 0; i < c->t.npids; i++)
		if (pg_is_postmaster(c->t.pids[i])) {
			warning("no transaction: pid %d is a postmaster, which runs none itself",
				c->t.pids[i]);
			hint("-p counts only the processes given (not their children): --pg covers "
			     "every process of a cluster (--pg %d)", c->t.pids[i]);
			return;
		}
}

static void report(void *ctx, const struct frame_report *fr)
{
	struct tps_cmd *c = ctx;
	bool summary = fr->kind == FRAME_SUMMARY;
	struct tps_totals *d = calloc(1, sizeof(*d));
	struct hist_summary s;
	struct row *rows = NULL;
	struct group *groups = NULL;
	int nr = 0, ng = 0;
	double secs = fr->span_s;

	if (!d || tps_probe_read_totals(c->probe, c->cur) < 0) {
		warning("cannot read the tps maps");
		free(d);
		return;
	}
	if (summary) {
		*d = *c->cur;
	} else {
		delta_totals(d, c->cur, c->prev);
		*c->prev = *c->cur;
	}
	summary_of(c, d, &s);
	/* The summary always lists the processes; --by splits every report. */
	if (summary || c->by != BY_NONE)
		nr = collect_rows(c, summary, &rows);
	if (c->by != BY_NONE && c->by != BY_PID)
		ng = group_rows(rows, nr, c->by, &groups);

	if (summary && !d->starts)
		hint_postmaster_pid(c);
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin(&j, fr);
		json_uint(&j, "starts", d->starts);
		json_uint(&j, "commits", d->commits);
		json_uint(&j, "aborts", d->aborts);
		json_double(&j, "tps", per_s(d->commits, secs));
		json_object_begin(&j, "txn");
		json_uint(&j, "count", s.count);
		/* No transaction timed: null, not a 0 nobody measured. */
		double none = s.count ? 0 : NAN;
		json_double(&j, "mean_us", s.mean / 1000.0 + none);
		json_double(&j, "p50_us", s.p50 / 1000.0 + none);
		json_double(&j, "p90_us", s.p90 / 1000.0 + none);
		json_double(&j, "p99_us", s.p99 / 1000.0 + none);
		json_double(&j, "max_us", s.max / 1000.0 + none);
		json_object_end(&j);
		json_object_begin(&j, "cycle");
		json_uint(&j, "count", d->cycles);
		json_double(&j, "mean_us", mean_us(d->cycle_ns, d->cycles));
		json_object_end(&j);
		hist_json(&j, "hist", &c->spec, (const uint64_t *)d->disp, "us");
		if (summary || c->by == BY_PID)
			json_rows(&j, rows, nr, secs);
		if (groups)
			json_groups(&j, c->by, groups, ng, secs);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		frame_text_head(stdout, fr);
		printf("tps %.1f  commits %" PRIu64 "  aborts %" PRIu64, per_s(d->commits, secs),
		       (uint64_t)d->commits, (uint64_t)d->aborts);
		if (s.count)
			printf("  txn ms: mean %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f\n", s.mean / 1e6,
			       s.p50 / 1e6, s.p90 / 1e6, s.p99 / 1e6, s.max / 1e6);
		else
			printf("  (no transaction timed)\n");
		if (summary || c->hist_given) {
			printf("transaction time (start -> commit/abort), microseconds:\n");
			hist_print(stdout, &c->spec, (const uint64_t *)d->disp, "us");
			char cyc[32];
			printf("cycle time (start -> next start on one backend; a closed-loop client's "
			       "latency):\n  mean %s ms over %" PRIu64 " cycles\n",
			       ms_str(cyc, sizeof(cyc), mean_us(d->cycle_ns, d->cycles)), (uint64_t)d->cycles);
		}
		if (c->by == BY_PID && nr)
			text_rows(rows, nr, secs);
		else if (ng)
			text_groups(c->by, groups, ng, secs);
	}
	free(groups);
	free(rows);
	free(d);
}

/* Detaches and frees; safe to call twice (error paths, then the frame's teardown). */
static void cleanup(void *ctx)
{
	struct tps_cmd *c = ctx;

	tps_probe_destroy(c->probe);
	c->probe = NULL;
	target_free(&c->t);
	free(c->prev);
	free(c->cur);
	free(c->h);
	free(c->bi);
	hashmap_free(&c->bi_of_tid);
	c->prev = c->cur = NULL;
	c->h = NULL;
	c->bi = NULL;
	c->nbi = 0;
}

int cmd_tps(int argc, char **argv)
{
	struct tps_cmd c = { 0 };
	struct tps_probe_opts po = { 0 };
	const struct frame_ops ops = {
		.report = report,
		.teardown = cleanup,
		.teardown_what = "detaching the tps probes",
	};
	const char *binary;
	int ret;

	c.spec.kind = DISP_LOG2;
	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true; /* the only cluster running here */
	ret = target_resolve(&c.t, &c.f.to, true);
	if (ret)
		return ret;
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	if (!binary) {
		error("cannot tell which binary %s runs", target_describe(&c.t));
		hint("run as root so /proc/PID/exe can be read");
		cleanup(&c);
		return EXIT_FAIL;
	}
	po.target = &c.t;
	po.binary = binary;
	po.hist = &c.spec;
	po.major = c.t.kind == TARGET_PG ? c.t.pg.major : 0;
	c.probe = tps_probe_open(&po);
	c.prev = calloc(1, sizeof(*c.prev));
	c.cur = calloc(1, sizeof(*c.cur));
	c.h = calloc(1, sizeof(*c.h));
	if (!c.probe || !c.prev || !c.cur || !c.h) {
		if (c.probe)
			error("out of memory");
		cleanup(&c);
		return EXIT_FAIL;
	}

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	c.f.target = &c.t;
	frame_start(&c.f);
	fprintf(stderr, "tracing transactions of %s (%d probe sites); Ctrl-C to stop\n",
		target_describe(&c.t), tps_probe_nlinks(c.probe));
	return frame_run(&c.f, &ops, &c);
}
