/* dbtap latency: time between two probes per thread, or per statement (latency query). */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/latency.h"
#include "cmd/cmd.h"
#include "pg/probes.h"
#include "report/hist.h"
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

struct lat_cmd {
	struct target t;
	struct time_opts time;
	struct hist_spec spec;
	bool hist_given, query, raw;
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
	struct runloop rl;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap latency START END [START END...] [--pg [TARGET] | -p PID | -t TID]\n"
		"                     [-i SECS] [-d SECS] [--hist log2|linear:MIN:MAX:STEP] [-j]\n"
		"       dbtap latency query [--pg [TARGET] | -p PID] [--top N] [--raw-query] ...\n\n"
		"Measures the time from START to END on the same thread, in the kernel, as a\n"
		"histogram with p50/p90/p99/max (within 1.6 %% of the true values).\n\n"
		"START and END are probes: usdt:[BINARY:]PROVIDER:NAME, uprobe:BINARY:FUNCTION,\n"
		"uretprobe:BINARY:FUNCTION (a function's duration: uprobe:B:F uretprobe:B:F).\n"
		"A START without its END on the thread is replaced by the thread's next START.\n\n"
		"latency query: PostgreSQL's query__start -> query__done (simple query protocol)\n"
		"per backend, and the statements with the most total time, their literals shown\n"
		"as $1, $2... (raw texts can carry secrets; --raw-query shows them as sent).\n\n"
		"options:\n"
		"  --pg [TARGET]      every process of a cluster, later backends included\n"
		"  -p PID[,PID]       these processes;  -t TID  one thread\n"
		"  -i, --interval S   a report every S seconds (default: only the final one)\n"
		"  -d, --duration S   stop after S seconds (default: Ctrl-C, or the target exits)\n"
		"  --hist SPEC        log2 (default) or linear:MIN:MAX:STEP, in microseconds\n"
		"  --top N            statements listed by latency query (default 10)\n"
		"  --raw-query        statement texts as sent, literals included\n"
		"  -j, --json         one JSON object per report, the last with \"summary\": true\n"
		"  -h, --help         this text\n\n"
		"examples:\n"
		"  dbtap latency --pg query -d 10\n"
		"  dbtap latency --pg uprobe:postgres:pg_plan_query uretprobe:postgres:pg_plan_query\n"
		"  dbtap latency --pg usdt:postgresql:lock__wait__start usdt:postgresql:lock__wait__done\n");
}

static int parse_options(struct lat_cmd *c, struct target_opts *to, int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACING_LONGOPTS,
		{ "hist", required_argument, NULL, 'H' },
		{ "top", required_argument, NULL, 'T' },
		{ "raw-query", no_argument, NULL, 'R' },
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
		case 'H':
			if (hist_spec_parse(optarg, &c->spec) < 0)
				return EXIT_USAGE;
			c->hist_given = true;
			break;
		case 'T':
			if (top_opt(&c->top, optarg, "statements") < 0)
				return EXIT_USAGE;
			break;
		case 'R':
			c->raw = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return cmd_bad_option("latency", opt, argv);
		}
	}
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
	snprintf(s, sizeof(s), "usdt:%s:%s:%s", binary, names->provider, names->query_start);
	snprintf(e, sizeof(e), "usdt:%s:%s:%s", binary, names->provider, names->query_done);
	c->labels[0] = names->query_start;
	c->labels[1] = names->query_done;
	ret = resolve_one(c, s, binary, 0, &c->starts[0]);
	if (!ret)
		ret = resolve_one(c, e, binary, 1, &c->ends[0]);
	c->npairs = 1;
	c->query = true;
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

/* What a process is, for the summary: a backend type with --pg, else its command name. */
static void type_of(struct lat_cmd *c, __u32 pid, char *buf, size_t len)
{
	buf[0] = '\0';
	if (c->t.kind == TARGET_PG)
		snprintf(buf, len, "%s", pid == (__u32)c->t.pg.postmaster ? "postmaster" :
			 target_proc_type(&c->t, pid));
	else
		proc_comm(pid, buf, len);
	if (!buf[0])
		snprintf(buf, len, "exited");
}

/* Every 200 ms: whether the target still runs. */
static bool poll_check(void *arg)
{
	struct lat_cmd *c = arg;

	return c->t.kind == TARGET_NONE || target_alive(&c->t);
}

static int cmp_stmt(const void *a, const void *b)
{
	const struct stmt *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void pair_summary(struct lat_cmd *c, const struct lat_hist *d, struct hist_summary *s)
{
	memcpy(c->h->counts, d->ll, sizeof(d->ll));
	c->h->count = d->count;
	c->h->sum = d->sum_ns;
	hist_summarize(c->h, s);
}

static void json_processes(struct lat_cmd *c, struct json *j)
{
	struct lat_key *k = NULL;
	struct lat_thread *v = NULL;
	int n = lat_probe_read_threads(c->lp, &k, &v);

	json_array_begin(j, "processes");
	for (int i = 0; i < n; i++) {
		json_object_begin(j, NULL);
		json_int(j, "pid", v[i].tgid);
		if (k[i].tid != v[i].tgid)
			json_int(j, "tid", k[i].tid);
		json_int(j, "pair", k[i].pair);
		char type[64];
		type_of(c, v[i].tgid, type, sizeof(type));
		json_str(j, "type", type);
		json_uint(j, "count", v[i].count);
		json_double(j, "mean_us", v[i].count ? v[i].sum_ns / 1000.0 / v[i].count : 0.0);
		json_object_end(j);
	}
	json_array_end(j);
	free(k);
	free(v);
}

static void report(struct lat_cmd *c, bool summary)
{
	double secs = summary ? runloop_total(&c->rl) : runloop_elapsed(&c->rl);
	int pending = lat_probe_pending(c->lp);
	struct json j;
	char ts[16];
	time_t now = time(NULL);

	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	if (global.json) {
		json_init(&j);
		json_object_begin(&j, NULL);
		if (summary)
			json_bool(&j, "summary", true);
		json_double(&j, "time", runloop_total(&c->rl));
		json_double(&j, summary ? "duration" : "interval", secs);
		json_int(&j, "pending", pending);
		json_array_begin(&j, "pairs");
	} else if (summary) {
		printf("\ntotal over %.1f s:\n", secs);
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
			for (unsigned b = 0; b < LL_BUCKETS; b++)
				d->ll[b] = c->cur->ll[b] - c->prev[i].ll[b];
			for (unsigned b = 0; b < DISP_SLOTS; b++)
				d->disp[b] = c->cur->disp[b] - c->prev[i].disp[b];
			c->prev[i] = *c->cur;
		}
		pair_summary(c, d, &s);
		if (global.json) {
			json_object_begin(&j, NULL);
			json_str(&j, "start", c->labels[2 * i]);
			json_str(&j, "end", c->labels[2 * i + 1]);
			json_uint(&j, "count", s.count);
			json_double(&j, "rate", secs > 0 ? s.count / secs : 0.0);
			json_uint(&j, "unmatched_ends", d->unmatched);
			json_double(&j, "mean_us", s.mean / 1000.0);
			json_double(&j, "p50_us", s.p50 / 1000.0);
			json_double(&j, "p90_us", s.p90 / 1000.0);
			json_double(&j, "p99_us", s.p99 / 1000.0);
			json_double(&j, "max_us", s.max / 1000.0);
			if (c->query)
				json_uint(&j, "dropped", d->dropped);
			json_str(&j, "hist_unit", "us");
			hist_json(&j, "hist", &c->spec, (const uint64_t *)d->disp, "us");
			json_object_end(&j);
		} else {
			printf("%s  %s -> %s  count %" PRIu64 "  %.1f/s  us: mean %.1f p50 %.1f p90 %.1f "
			       "p99 %.1f max %.1f\n", summary ? "" : ts, c->labels[2 * i],
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
		qsort(c->stmts, c->nstmts, sizeof(*c->stmts), cmp_stmt);
		ntop = c->nstmts < c->top ? c->nstmts : c->top;
	}
	if (global.json) {
		json_array_end(&j);
		if (summary && c->query) {
			json_array_begin(&j, "top");
			for (int i = 0; i < ntop; i++) {
				const struct stmt *s = &c->stmts[i];
				json_object_begin(&j, NULL);
				json_str(&j, "query", s->text);
				json_uint(&j, "count", s->count);
				json_double(&j, "total_us", s->total_ns / 1000.0);
				json_double(&j, "mean_us", s->total_ns / 1000.0 / s->count);
				json_double(&j, "max_us", s->max_ns / 1000.0);
				json_object_end(&j);
			}
			json_array_end(&j);
			json_int(&j, "statements", c->nstmts);
			json_uint(&j, "statements_not_grouped", c->stmt_other);
		}
		if (summary)
			json_processes(c, &j);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else if (ntop) {
		printf("statements by total time (%s):\n", c->raw ? "as sent" : "literals as $n");
		printf("%9s %11s %10s %10s  %s\n", "COUNT", "TOTAL_MS", "MEAN_MS", "MAX_MS", "QUERY");
		for (int i = 0; i < ntop; i++) {
			const struct stmt *s = &c->stmts[i];
			printf("%9" PRIu64 " %11.3f %10.3f %10.3f  %.60s\n", s->count, s->total_ns / 1e6,
			       s->total_ns / 1e6 / s->count, s->max_ns / 1e6, s->text);
		}
	}
}

int cmd_latency(int argc, char **argv)
{
	struct lat_cmd c = { .top = 10 };
	struct target_opts to = { 0 };
	struct lat_probe_opts po = { 0 };
	const char *binary;
	int ret;

	c.spec.kind = DISP_LOG2;
	ret = parse_options(&c, &to, argc, argv);
	if (ret)
		return ret;
	bool query = !strcmp(argv[optind], "query");
	if (query && !to.pg_set && !to.pids && !to.tid)
		to.pg_set = true;
	ret = target_resolve(&c.t, &to, false);
	if (ret)
		return ret;
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	ret = query ? setup_query(&c, argc, argv, binary) : setup_pairs(&c, argc, argv, binary);
	if (ret)
		goto out;

	po.target = &c.t;
	po.hist = &c.spec;
	po.starts = c.starts;
	po.ends = c.ends;
	po.npairs = c.npairs;
	po.query = c.query;
	po.raw = c.raw;
	c.lp = lat_probe_open(&po);
	if (!c.lp) {
		ret = EXIT_FAIL;
		goto out;
	}
	c.cur = calloc(1, sizeof(*c.cur));
	c.d = calloc(1, sizeof(*c.d));
	c.h = calloc(1, sizeof(*c.h));
	if (!c.cur || !c.d || !c.h) {
		error("out of memory");
		ret = EXIT_FAIL;
		goto out;
	}

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	runloop_init(&c.rl, c.time.interval, c.time.duration);
	fprintf(stderr, "tracing %d pair%s in %s (%d probes); Ctrl-C to stop\n", c.npairs,
		c.npairs == 1 ? "" : "s", c.t.kind == TARGET_NONE ? "every process" :
		target_describe(&c.t), lat_probe_nlinks(c.lp));
	for (;;) {
		enum runloop_event ev = runloop_wait(&c.rl, 200, poll_check, &c);
		if (ev == RUNLOOP_TICK) {
			report(&c, false);
			continue;
		}
		if (c.t.kind != TARGET_NONE && !target_alive(&c.t))
			warning("%s exited; stopping", target_describe(&c.t));
		break;
	}
	if (c.time.interval > 0)
		report(&c, false);
	report(&c, true);
	ret = EXIT_OK;
out:
	lat_probe_destroy(c.lp);
	for (int i = 0; i < 2 * LAT_MAX_PAIRS; i++)
		probe_list_free(&c.lists[i]);
	for (int i = 0; i < c.nstmts; i++)
		free(c.stmts[i].text);
	free(c.stmts);
	hashmap_free(&c.stmt_of_text);
	free(c.cur);
	free(c.d);
	free(c.h);
	target_free(&c.t);
	return ret;
}
