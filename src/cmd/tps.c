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
#include "pg/cluster.h"
#include "report/hist.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
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
	struct target t;
	struct time_opts time;
	bool per_backend, hist_given;
	struct hist_spec spec;
	struct tps_probe *probe;
	struct tps_totals *prev, *cur;
	struct hist *h;
	struct backend_info *bi;
	int nbi;
	struct runloop rl;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap tps [--pg [TARGET] | -p PID] [-i SECS] [-d SECS] [--per-backend]\n"
		"                 [--hist log2|linear:MIN:MAX:STEP] [-j]\n\n"
		"Counts PostgreSQL transactions from its transaction__start/commit/abort USDT\n"
		"probes in every process of the cluster, backends that connect later included.\n"
		"Aggregation happens in the kernel; dbtap reads the maps once per interval.\n\n"
		"Two times are measured per backend:\n"
		"  transaction time  start -> commit/abort (histogram with p50/p90/p99/max,\n"
		"                    within 1.6 %% of the true value)\n"
		"  cycle time        start -> next start on the same backend: what a closed-loop\n"
		"                    client such as pgbench reports as its latency\n\n"
		"options:\n"
		"  --pg [TARGET]     the cluster (data directory, port or postmaster pid;\n"
		"                    alone: the only one running)\n"
		"  -p PID[,PID]      these server processes only\n"
		"  -i, --interval S  a report every S seconds (default: only the final one)\n"
		"  -d, --duration S  stop after S seconds (default: Ctrl-C)\n"
		"  --per-backend     per connection: pid, type, user, database, TPS, times\n"
		"  --hist SPEC       log2 (default) or linear:MIN:MAX:STEP, in microseconds\n"
		"  -j, --json        one JSON object per report, the last with \"summary\": true\n"
		"  -h, --help        this text\n\n"
		"examples:\n"
		"  dbtap tps -i 1                         cluster TPS every second\n"
		"  dbtap tps --per-backend -d 10          per connection over 10 seconds\n"
		"  dbtap tps --hist linear:0:1000:50 -i 5 SystemTap-style histogram\n");
}

static int parse_options(struct tps_cmd *c, struct target_opts *to, int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACING_LONGOPTS,
		{ "per-backend", no_argument, NULL, 'B' },
		{ "hist", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, r;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":" TRACING_SHORTOPTS "h", longopts, NULL)) != -1) {
		if ((r = tracing_opt(to, &c->time, opt, argc, argv)) < 0)
			return EXIT_USAGE;
		if (r)
			continue;
		switch (opt) {
		case 'B':
			c->per_backend = true;
			break;
		case 'H':
			if (hist_spec_parse(optarg, &c->spec) < 0)
				return EXIT_USAGE;
			c->hist_given = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return cmd_bad_option("tps", opt, argv);
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("tps takes options only; see 'dbtap tps --help'");
		return EXIT_USAGE;
	}
	return 0;
}

static void fill_info(struct tps_cmd *c, struct backend_info *bi, const struct tps_backend *b)
{
	struct pg_title pt;

	if (c->t.kind == TARGET_PG && bi->tgid == (__u32)c->t.pg.postmaster) {
		snprintf(bi->type, sizeof(bi->type), "postmaster");
		bi->typed = true;
		return;
	}
	/* The title the kernel saw first: it survives the backend's exit. */
	if (b->title[0] && pg_title_parse_full(b->title, &pt) == 0) {
		snprintf(bi->type, sizeof(bi->type), "%s", pt.type);
		snprintf(bi->user, sizeof(bi->user), "%s", pt.user);
		snprintf(bi->database, sizeof(bi->database), "%s", pt.database);
		bi->typed = true;
		return;
	}
	if (c->t.kind == TARGET_PG) {
		const char *type = target_proc_type(&c->t, bi->tgid);
		if (type[0] && strcmp(type, "unknown")) {
			snprintf(bi->type, sizeof(bi->type), "%s", type);
			for (int i = 0; i < c->t.pg.nprocs; i++)
				if (c->t.pg.procs[i].pid == (pid_t)bi->tgid) {
					snprintf(bi->user, sizeof(bi->user), "%s", c->t.pg.procs[i].user);
					snprintf(bi->database, sizeof(bi->database), "%s",
						 c->t.pg.procs[i].database);
				}
			bi->typed = true;
			return;
		}
		snprintf(bi->type, sizeof(bi->type), "%s", proc_exists(bi->tgid) ? "unknown" : "exited");
		return;
	}
	if (proc_comm(bi->tgid, bi->type, sizeof(bi->type)) == 0)
		bi->typed = true;
}

static int cmp_info(const void *a, const void *b)
{
	const struct backend_info *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct backend_info *info_find(struct tps_cmd *c, __u32 tid)
{
	struct backend_info key = { .tid = tid };

	return c->nbi ? bsearch(&key, c->bi, c->nbi, sizeof(*c->bi), cmp_info) : NULL;
}

/*
 * Makes sure every backend of e has its info (c->bi stays sorted by tid, so a busy
 * server's thousands of backends are found by bisection), typing those not typed yet.
 */
static void info_update(struct tps_cmd *c, const struct tps_backend_entry *e, int n)
{
	int added = 0;

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
		c->bi = realloc(c->bi, (c->nbi + added + 1) * sizeof(*c->bi));
		bi = &c->bi[c->nbi + added++];
		memset(bi, 0, sizeof(*bi));
		bi->tid = e[i].tid;
		bi->tgid = e[i].b.tgid;
		bi->born = e[i].b.born;
		fill_info(c, bi, &e[i].b);
	}
	if (added) {
		c->nbi += added;
		qsort(c->bi, c->nbi, sizeof(*c->bi), cmp_info);
	}
}

/* Every 200 ms: whether the target still runs. Types come from the kernel's titles. */
static bool poll_check(void *arg)
{
	struct tps_cmd *c = arg;

	return target_alive(&c->t);
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

	/* Learn every backend first: that may move c->bi, and rows point into it. */
	info_update(c, e, n);
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
		json_uint(j, "starts", r->d.starts);
		json_uint(j, "commits", r->d.commits);
		json_uint(j, "aborts", r->d.aborts);
		json_double(j, "tps", per_s(r->d.commits, secs));
		json_double(j, "txn_mean_us", mean_us(r->d.txn_ns, r->d.timed));
		json_uint(j, "cycles", r->d.cycles);
		json_double(j, "cycle_mean_us", mean_us(r->d.cycle_ns, r->d.cycles));
		json_object_end(j);
	}
	json_array_end(j);
}

static void text_rows(const struct row *rows, int nr, double secs)
{
	printf("%8s %-22s %-10s %-10s %9s %8s %6s %9s %9s\n", "PID", "TYPE", "USER", "DATABASE",
	       "TPS", "COMMITS", "ABORTS", "TXN_MS", "CYCLE_MS");
	for (int i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		char txn[32], cyc[32];
		printf("%8u %-22.22s %-10.10s %-10.10s %9.1f %8" PRIu64 " %6" PRIu64 " %9s %9s\n",
		       r->bi->tid, r->bi->type, r->bi->user[0] ? r->bi->user : "-",
		       r->bi->database[0] ? r->bi->database : "-", per_s(r->d.commits, secs),
		       (uint64_t)r->d.commits, (uint64_t)r->d.aborts,
		       ms_str(txn, sizeof(txn), mean_us(r->d.txn_ns, r->d.timed)),
		       ms_str(cyc, sizeof(cyc), mean_us(r->d.cycle_ns, r->d.cycles)));
	}
}

static void report(struct tps_cmd *c, bool summary)
{
	struct tps_totals *d = calloc(1, sizeof(*d));
	struct hist_summary s;
	struct row *rows = NULL;
	int nr = 0;
	double secs;

	if (tps_probe_read_totals(c->probe, c->cur) < 0) {
		warning("cannot read the tps maps");
		free(d);
		return;
	}
	if (summary) {
		secs = runloop_total(&c->rl);
		*d = *c->cur;
	} else {
		secs = runloop_elapsed(&c->rl);
		delta_totals(d, c->cur, c->prev);
		*c->prev = *c->cur;
	}
	summary_of(c, d, &s);
	if (summary || c->per_backend)
		nr = collect_rows(c, summary, &rows);

	if (global.json) {
		struct json j;
		json_init(&j);
		json_object_begin(&j, NULL);
		if (summary)
			json_bool(&j, "summary", true);
		json_double(&j, "time", runloop_total(&c->rl));
		json_double(&j, summary ? "duration" : "interval", secs);
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
		json_str(&j, "hist_unit", "us");
		hist_json(&j, "hist", &c->spec, (const uint64_t *)d->disp);
		if (summary || c->per_backend)
			json_rows(&j, rows, nr, secs);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		char ts[16];
		time_t now = time(NULL);
		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		if (summary)
			printf("\ntotal over %.1f s: ", secs);
		else
			printf("%s  ", ts);
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
		if (c->per_backend && nr)
			text_rows(rows, nr, secs);
	}
	free(rows);
	free(d);
}

int cmd_tps(int argc, char **argv)
{
	struct tps_cmd c = { 0 };
	struct target_opts to = { 0 };
	struct tps_probe_opts po = { 0 };
	const char *binary;
	int ret;

	c.spec.kind = DISP_LOG2;
	ret = parse_options(&c, &to, argc, argv);
	if (ret)
		return ret;
	if (to.tid) {
		error("tps follows whole processes: -t is not supported");
		hint("use -p PID or --pg");
		return EXIT_USAGE;
	}
	if (!to.pg_set && !to.pids)
		to.pg_set = true; /* the only cluster running here */
	ret = target_resolve(&c.t, &to, true);
	if (ret)
		return ret;
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	if (!binary) {
		error("cannot tell which binary %s runs", target_describe(&c.t));
		hint("run as root so /proc/PID/exe can be read");
		target_free(&c.t);
		return EXIT_FAIL;
	}
	po.target = &c.t;
	po.binary = binary;
	po.hist = &c.spec;
	po.major = c.t.kind == TARGET_PG ? c.t.pg.major : 0;
	c.probe = tps_probe_open(&po);
	if (!c.probe) {
		target_free(&c.t);
		return EXIT_FAIL;
	}
	c.prev = calloc(1, sizeof(*c.prev));
	c.cur = calloc(1, sizeof(*c.cur));
	c.h = calloc(1, sizeof(*c.h));

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	runloop_init(&c.rl, c.time.interval, c.time.duration);
	fprintf(stderr, "tracing transactions of %s (%d probes); Ctrl-C to stop\n",
		target_describe(&c.t), tps_probe_nlinks(c.probe));
	for (;;) {
		enum runloop_event ev = runloop_wait(&c.rl, 200, poll_check, &c);
		if (ev == RUNLOOP_TICK) {
			report(&c, false);
			continue;
		}
		if (!target_alive(&c.t))
			warning("%s exited; stopping", target_describe(&c.t));
		break;
	}
	/* The tail since the last tick, so that the interval reports add up to the total. */
	if (c.time.interval > 0)
		report(&c, false);
	report(&c, true);
	tps_probe_destroy(c.probe);
	target_free(&c.t);
	free(c.prev);
	free(c.cur);
	free(c.h);
	free(c.bi);
	return EXIT_OK;
}
