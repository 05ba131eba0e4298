/* dbtap stat: performance counters per process, thread, query or transaction. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/stat.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "perf/counter.h"
#include "perf/event.h"
#include "report/savedrun.h"
#include "report/stmt.h"
#include "target/label.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/strbuf.h"

/* --by: what the figures are split by. tid and transaction are stat's own keys. */
enum stat_by { SB_NONE, SB_PID, SB_TID, SB_TYPE, SB_DATABASE, SB_USER, SB_QUERY, SB_TRANSACTION };
static const struct {
	const char *name, *array, *column;
} by_keys[] = {
	[SB_NONE] = { "", "", "" },
	[SB_PID] = { "pid", "processes", "PID" },
	[SB_TID] = { "tid", "processes", "TID" },
	[SB_TYPE] = { "type", "types", "TYPE" },
	[SB_DATABASE] = { "database", "databases", "DATABASE" },
	[SB_USER] = { "user", "users", "USER" },
	[SB_QUERY] = { "query", "statements", "" },
	[SB_TRANSACTION] = { "transaction", "transactions", "" },
};
#define NBY (int)(sizeof(by_keys) / sizeof(by_keys[0]))
/* --per WHAT, the older spelling: the --by key each word stands for */
static const struct {
	const char *per;
	enum stat_by by;
} per_alias[] = {
	{ "process", SB_PID }, { "thread", SB_TID }, { "query", SB_QUERY },
	{ "transaction", SB_TRANSACTION },
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_PER, OPT_COMPARE, OPT_TOP, OPT_SORT };

static const struct frame_opt stat_opts[] = {
	{ "event", 'e', required_argument, "EVENT[,EVENT...]",
	  "events by perf's names: task-clock, cpu-clock, context-switches,\n"
	  "cpu-migrations, page-faults, minor-faults, major-faults,\n"
	  "instructions, cycles, branches, branch-misses, cache-references,\n"
	  "cache-misses, L1-dcache-load-misses, dTLB-load-misses, rNNNN (raw),\n"
	  "PMU names libpfm4 knows; :u :k modifiers (default: task-clock,\n"
	  "context-switches, cpu-migrations, page-faults, cycles, instructions,\n"
	  "branches, branch-misses)" },
	FRAME_OPTS_TARGET,
	{ "by", OPT_BY, required_argument, "pid|tid|type|database|user|query|transaction",
	  "split the counts: per process, thread, backend type, database or\n"
	  "user; query, transaction: read in the kernel per statement (USDT)" },
	{ "per", OPT_PER, required_argument, "WHAT",
	  "the older spelling of --by: process (pid), thread (tid), query,\n"
	  "transaction", FRAME_OPT_CMD, true },
	FRAME_OPTS_TIME,
	{ "compare", OPT_COMPARE, required_argument, "OTHER",
	  "a second target measured the same way, side by side:\n"
	  "pid:PID[,PID], tid:TID, pg:[TARGET], or FILE: a run saved\n"
	  "with 'dbtap -j stat ... > FILE'" },
	{ "top", OPT_TOP, required_argument, "N", "statements printed per report (default 10; -j: all)" },
	{ "sort", OPT_SORT, required_argument, "KEY",
	  "which statements --top keeps, largest first: wall (total wall\n"
	  "time, the default), mean, p99 (wall time per call), calls, or an\n"
	  "-e event's total" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd stat_frame = {
	.name = "stat",
	.about =
		"Counts events as perf stat does, for a cluster, processes or one thread. With\n"
		"--by query or --by transaction the counters are read in the kernel at\n"
		"PostgreSQL's USDT probes: each statement's own counts, its CPUs, its migrations.\n",
	.examples =
		"  dbtap stat --pg -d 5                          the cluster's counts over 5 s\n"
		"  dbtap stat --pg --by type -e task-clock -i 1  CPU time per backend type\n"
		"  dbtap stat --pg --by query -e task-clock,page-faults --top 5\n",
	.opts = stat_opts,
};

struct stat_cmd {
	struct frame f;
	struct perf_event_desc *evs;
	int nev;
	enum stat_by by;
	const char *compare;
	int top;
	int sort; /* SORT_* or an event's index: what --top keeps the largest of */
	const char *sort_arg;
	struct strbuf events;
	struct side *sides;
	int nsides;
};

/* --sort: statements by their total wall time (default), mean, p99, calls, or an event. */
enum { SORT_WALL = -1, SORT_MEAN = -2, SORT_P99 = -3, SORT_CALLS = -4 };

/* A measured side: the target and its counters or its per-statement probe. */
struct side {
	struct savedrun saved;     /* --compare FILE: nothing is measured */
	bool is_saved;
	struct target t;
	char *desc;
	struct counter_set cs;
	bool cs_init;
	struct stat_probe *probe;
	struct stmt_table prev; /* per statement: the previous report's table, for intervals */
};

static bool by_stmt(enum stat_by by)
{
	return by == SB_QUERY || by == SB_TRANSACTION;
}

/* ---- counting modes ---- */

struct figures {
	int nev;
	double seconds;
	double val[STAT_MAX_EVENTS];
	double pct[STAT_MAX_EVENTS];
	bool counted[STAT_MAX_EVENTS];
	int err[STAT_MAX_EVENTS];
	const char *reason[STAT_MAX_EVENTS]; /* from a saved run, instead of err */
	struct counter_metrics m;
};

static int side_open_counters(struct side *s, const struct stat_cmd *c)
{
	counter_set_init(&s->cs, c->evs, c->nev);
	s->cs_init = true;
	return counter_set_open_target(&s->cs, &s->t, c->by == SB_TID);
}

/* Says once, on stderr, which events cannot be counted and why. */
static int report_open_errors(const struct stat_cmd *c, const int *err, int counted)
{
	char last_hint[512] = "";

	for (int e = 0; e < c->nev; e++) {
		char reason[128], h[512];
		if (!err[e])
			continue;
		perf_event_strerror(&c->evs[e], err[e], reason, sizeof(reason), h, sizeof(h));
		if (counted)
			warning("event '%s': %s", c->evs[e].name, reason);
		else
			error("event '%s': %s", c->evs[e].name, reason);
		/* one hint for a run of events failing for the same reason */
		bool same_next = false;
		for (int n = e + 1; n < c->nev && !same_next; n++) {
			char r2[128], h2[512];
			if (!err[n])
				continue;
			perf_event_strerror(&c->evs[n], err[n], r2, sizeof(r2), h2, sizeof(h2));
			same_next = !strcmp(h, h2);
			break;
		}
		if (!same_next && strcmp(h, last_hint))
			hint("%s", h);
		if (!same_next)
			snprintf(last_hint, sizeof(last_hint), "%s", h);
	}
	return counted ? 0 : EXIT_FAIL;
}


static void warn_multiplexing(const struct stat_cmd *c, const int *err)
{
	int hw = 0;
	for (int e = 0; e < c->nev; e++)
		hw += c->evs[e].hardware && !err[e];
	if (hw > 4)
		warning("%d hardware events: most CPUs count 4 to 8 at once, so they will be "
			"multiplexed and scaled (the share of time counted is shown)", hw);
}

static void unit_window(const struct counter_set *cs, int u, bool since_start,
			struct counter_value *out)
{
	for (int e = 0; e < cs->nev; e++)
		out[e] = since_start ? cs->units[u].cur[e] :
			 counter_delta(&cs->units[u].cur[e], &cs->units[u].prev[e]);
}

static void fill_figures(const struct stat_cmd *c, const int *err,
			 const struct counter_value *w, double seconds, struct figures *f)
{
	memset(f, 0, sizeof(*f));
	f->nev = c->nev;
	f->seconds = seconds;
	for (int e = 0; e < c->nev; e++) {
		f->err[e] = err[e];
		if (!err[e])
			f->counted[e] = counter_scale(&w[e], &f->val[e], &f->pct[e]);
	}
	counter_metrics_compute(c->evs, f->val, f->counted, c->nev, seconds, &f->m);
}

/*
 * The units of group g summed (group NULL: every unit): counts add up, enabled and
 * running are the longest (threads and processes run side by side).
 */
static void side_figures(const struct stat_cmd *c, struct side *s, const int *group, int g,
			 bool since_start, double seconds, struct figures *f)
{
	struct counter_value w[STAT_MAX_EVENTS], sum[STAT_MAX_EVENTS];

	memset(sum, 0, sizeof(sum));
	for (int u = 0; u < s->cs.nunits; u++) {
		if (group && group[u] != g)
			continue;
		unit_window(&s->cs, u, since_start, w);
		for (int e = 0; e < c->nev; e++) {
			sum[e].value += w[e].value;
			if (w[e].enabled > sum[e].enabled)
				sum[e].enabled = w[e].enabled;
			if (w[e].running > sum[e].running)
				sum[e].running = w[e].running;
		}
	}
	fill_figures(c, s->cs.err, sum, seconds, f);
}

static const char *reason_of(const struct perf_event_desc *ev, int err);

static const char *fig_reason(const struct stat_cmd *c, const struct figures *f, int e)
{
	return f->reason[e] ? f->reason[e] : reason_of(&c->evs[e], f->err[e]);
}

static const char *reason_of(const struct perf_event_desc *ev, int err)
{
	static char reason[128];
	char h[512];
	if (!err)
		return "not counted (never scheduled on a counter in this window)";
	perf_event_strerror(ev, err, reason, sizeof(reason), h, sizeof(h));
	return reason;
}

/* perf's thousands separators for a count. */
static const char *fmt_count(double v, char *buf, size_t len)
{
	char raw[64];
	int n, o = 0, lead;

	snprintf(raw, sizeof(raw), "%.0f", v);
	n = strlen(raw);
	lead = n % 3 ? n % 3 : 3;
	for (int i = 0; i < n && o < (int)len - 2; i++) {
		if (i && (i - lead) % 3 == 0 && i >= lead)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *metric_after(const struct perf_event_desc *ev, const struct figures *f,
				char *buf, size_t len)
{
	const struct perf_event_attr *a = &ev->attr;
	buf[0] = '\0';
	if (counter_event_is_clock(ev) && a->config == PERF_COUNT_SW_TASK_CLOCK &&
	    f->m.ok[METRIC_CPUS_UTILIZED])
		snprintf(buf, len, "#  %8.3f %s", f->m.v[METRIC_CPUS_UTILIZED],
			 counter_metric_label(METRIC_CPUS_UTILIZED));
	else if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_INSTRUCTIONS &&
		 f->m.ok[METRIC_IPC])
		snprintf(buf, len, "#  %8.2f %s", f->m.v[METRIC_IPC], counter_metric_label(METRIC_IPC));
	else if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_BRANCH_MISSES &&
		 f->m.ok[METRIC_BRANCH_MISS])
		snprintf(buf, len, "#  %7.2f%% %s", f->m.v[METRIC_BRANCH_MISS],
			 counter_metric_label(METRIC_BRANCH_MISS));
	else if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CACHE_MISSES &&
		 f->m.ok[METRIC_CACHE_MISS])
		snprintf(buf, len, "#  %7.2f%% %s", f->m.v[METRIC_CACHE_MISS],
			 counter_metric_label(METRIC_CACHE_MISS));
	return buf;
}

static void print_figures_text(const struct stat_cmd *c, const struct figures *f)
{
	for (int e = 0; e < c->nev; e++) {
		const struct perf_event_desc *ev = &c->evs[e];
		char num[64], extra[96];
		if (!f->counted[e]) {
			printf(" %18s      %-24s %s\n", f->err[e] ? "<not supported>" : "<not counted>",
			       ev->name, fig_reason(c, f, e));
			continue;
		}
		if (counter_event_is_clock(ev))
			printf(" %18.2f msec %-24s", f->val[e] / 1e6, ev->name);
		else
			printf(" %18s      %-24s", fmt_count(f->val[e], num, sizeof(num)), ev->name);
		metric_after(ev, f, extra, sizeof(extra));
		if (extra[0])
			printf(" %s", extra);
		else if (!counter_event_is_clock(ev) && f->seconds > 0)
			printf(" #  %10.2f /sec", f->val[e] / f->seconds);
		if (f->pct[e] < 99.95)
			printf("  (%.1f%%)", f->pct[e]);
		printf("\n");
	}
}

static void json_figures(struct json *j, const struct stat_cmd *c, const struct figures *f)
{
	json_object_begin(j, "events");
	for (int e = 0; e < c->nev; e++) {
		struct savedrun_count v = {
			.counted = f->counted[e], .value = f->val[e], .pct = f->pct[e],
			.reason = f->counted[e] ? NULL : fig_reason(c, f, e),
		};
		savedrun_write_count(j, c->evs[e].name, counter_event_is_clock(&c->evs[e]), &v,
				     f->seconds);
	}
	json_object_end(j);
	json_object_begin(j, "metrics");
	for (int m = 0; m < METRIC_NR; m++) {
		if (f->m.ok[m])
			json_double(j, counter_metric_key(m), f->m.v[m]);
		else
			json_null(j, counter_metric_key(m));
	}
	json_object_end(j);
}

/* B/A of per-second rates (the counts themselves when both windows are the same). */
static double rate_ratio(const struct figures *a, const struct figures *b, int e)
{
	if (!a->counted[e] || !b->counted[e] || a->val[e] <= 0 || a->seconds <= 0 ||
	    b->seconds <= 0)
		return NAN;
	return (b->val[e] / b->seconds) / (a->val[e] / a->seconds);
}

/* A saved counting run's summary as figures of the events counted now. */
static void saved_figures(const struct stat_cmd *c, const struct savedrun *sr,
			  struct figures *f)
{
	memset(f, 0, sizeof(*f));
	f->nev = c->nev;
	f->seconds = sr->duration_s;
	for (int e = 0; e < c->nev; e++) {
		struct savedrun_count v;
		savedrun_count(sr, c->evs[e].name, counter_event_is_clock(&c->evs[e]), &v);
		f->counted[e] = v.counted;
		f->val[e] = v.value;
		f->pct[e] = v.pct;
		f->reason[e] = v.reason;
	}
	counter_metrics_compute(c->evs, f->val, f->counted, c->nev, f->seconds, &f->m);
}

/* One row of a --by pid|tid|type|database|user report: a unit, or the units of a label. */
struct group {
	struct pid_label l;
	pid_t pid, tid;   /* --by pid|tid: the unit's */
	int nunits;
	bool gone;        /* every unit in it has exited */
};

static const char *group_key(const struct group *g, enum stat_by by)
{
	return by == SB_DATABASE ? g->l.database : by == SB_USER ? g->l.user : g->l.type;
}

/* The rows of the split: unit u is in row group_of[u]. Returns the number of rows. */
static int split_units(struct stat_cmd *c, struct side *s, struct group *g, int *group_of)
{
	int n = 0;

	for (int u = 0; u < s->cs.nunits; u++) {
		const struct counter_unit *cu = &s->cs.units[u];
		struct group x = { .pid = cu->pid, .tid = cu->tid, .nunits = 1, .gone = cu->gone };
		int k = n;

		target_label(&s->t, cu->pid, NULL, 0, &x.l);
		if (c->by != SB_PID && c->by != SB_TID)
			for (k = 0; k < n; k++)
				if (!strcmp(group_key(&g[k], c->by), group_key(&x, c->by)))
					break;
		if (k == n) {
			g[n++] = x;
		} else {
			g[k].nunits++;
			g[k].gone = g[k].gone && x.gone;
		}
		group_of[u] = k;
	}
	return n;
}

/* The text label of a row: its pid or tid, or its type, database or user ("-": none). */
static const char *group_text(const struct stat_cmd *c, const struct side *s,
			      const struct group *g, char *buf, size_t len)
{
	const char *k = group_key(g, c->by);

	if (c->by == SB_PID || c->by == SB_TID)
		snprintf(buf, len, "%d", c->by == SB_TID && g->tid ? g->tid : g->pid);
	else if (c->by == SB_TYPE && s->t.kind == TARGET_PG && !strcmp(k, "postmaster"))
		snprintf(buf, len, "postmaster (and the processes it forked since)");
	else
		snprintf(buf, len, "%s", *k ? k : "-");
	return buf;
}

static void report_split(struct stat_cmd *c, const struct frame_report *r)
{
	struct side *s = &c->sides[0];
	bool since_start = r->kind == FRAME_SUMMARY;
	struct group *g = calloc(s->cs.nunits ? s->cs.nunits : 1, sizeof(*g));
	int *group_of = calloc(s->cs.nunits ? s->cs.nunits : 1, sizeof(*group_of));
	int n, w = 3;
	struct figures f;
	struct json j;
	char label[128];

	if (!g || !group_of) {
		warning("out of memory: no report");
		free(g);
		free(group_of);
		return;
	}
	n = split_units(c, s, g, group_of);
	if (global.json) {
		json_init(&j);
		frame_json_begin(&j, r);
		json_str(&j, "target", s->desc);
		json_array_begin(&j, by_keys[c->by].array);
		for (int k = 0; k < n; k++) {
			side_figures(c, s, group_of, k, since_start, r->span_s, &f);
			json_object_begin(&j, NULL);
			if (c->by == SB_PID || c->by == SB_TID) {
				json_int(&j, "pid", g[k].pid);
				if (g[k].tid && g[k].tid != g[k].pid)
					json_int(&j, "tid", g[k].tid);
				json_str(&j, "type", g[k].l.type);
				json_str(&j, "user", g[k].l.user[0] ? g[k].l.user : NULL);
				json_str(&j, "database", g[k].l.database[0] ? g[k].l.database : NULL);
				json_bool(&j, "exited", g[k].gone);
			} else {
				const char *v = group_key(&g[k], c->by);
				json_str(&j, by_keys[c->by].name, *v ? v : NULL);
				json_int(&j, "process_count", g[k].nunits);
			}
			json_figures(&j, c, &f);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		goto out;
	}
	frame_text_head(stdout, r);
	printf("performance counter stats per %s, %s:\n", by_keys[c->by].name, s->desc);
	for (int k = 0; k < n; k++)
		w = frame_width(w, group_text(c, s, &g[k], label, sizeof(label)));
	if (c->nev > 4) {
		/* too many columns for a table under 100 columns: blocks */
		for (int k = 0; k < n; k++) {
			side_figures(c, s, group_of, k, since_start, r->span_s, &f);
			printf("\n %s %s%s%s%s:\n\n", by_keys[c->by].name,
			       group_text(c, s, &g[k], label, sizeof(label)),
			       c->by == SB_PID || c->by == SB_TID ? " " : "",
			       c->by == SB_PID || c->by == SB_TID ? g[k].l.type : "",
			       g[k].gone ? ", exited" : "");
			print_figures_text(c, &f);
		}
		goto out;
	}
	/* a table: one row per process, thread or label, one column per event */
	printf("\n %-*s", w, by_keys[c->by].column);
	for (int e = 0; e < c->nev; e++) {
		char h[PERF_EVENT_NAME_MAX + 8];
		snprintf(h, sizeof(h), "%s%s", c->evs[e].name,
			 counter_event_is_clock(&c->evs[e]) ? "(ms)" : "");
		printf(" %16.16s", h);
	}
	printf("  %s\n", c->by == SB_PID || c->by == SB_TID ? "TYPE" : "PROCESSES");
	for (int k = 0; k < n; k++) {
		side_figures(c, s, group_of, k, since_start, r->span_s, &f);
		printf(" %-*s", w, group_text(c, s, &g[k], label, sizeof(label)));
		for (int e = 0; e < c->nev; e++) {
			char num[64];
			if (!f.counted[e])
				printf(" %16s", f.err[e] ? "<not supported>" : "<not counted>");
			else if (counter_event_is_clock(&c->evs[e]))
				printf(" %16.2f", f.val[e] / 1e6);
			else
				printf(" %16s", fmt_count(f.val[e], num, sizeof(num)));
		}
		if (c->by == SB_PID || c->by == SB_TID)
			printf("  %s%s\n", g[k].l.type, g[k].gone ? " (exited)" : "");
		else
			printf("  %d\n", g[k].nunits);
	}
out:
	free(g);
	free(group_of);
}

static void report_counters(struct stat_cmd *c, const struct frame_report *r)
{
	struct side *sides = c->sides;
	bool since_start = r->kind == FRAME_SUMMARY;
	double seconds = r->span_s;
	struct figures f, g;
	struct json j;

	for (int i = 0; i < c->nsides; i++)
		if (!sides[i].is_saved)
			counter_set_read(&sides[i].cs);
	if (c->by != SB_NONE) {
		report_split(c, r);
		return;
	}
	side_figures(c, &sides[0], NULL, 0, since_start, seconds, &f);
	if (c->nsides > 1) {
		if (sides[1].is_saved)
			saved_figures(c, &sides[1].saved, &g);
		else
			side_figures(c, &sides[1], NULL, 0, since_start, seconds, &g);
	}
	if (global.json) {
		json_init(&j);
		frame_json_begin(&j, r);
		json_str(&j, "target", sides[0].desc);
		json_figures(&j, c, &f);
		if (c->nsides > 1) {
			json_object_begin(&j, "compare");
			json_str(&j, "target", sides[1].desc);
			if (sides[1].is_saved)
				json_double(&j, "duration_s", g.seconds);
			json_figures(&j, c, &g);
			json_object_begin(&j, "ratio");
			for (int e = 0; e < c->nev; e++) {
				double q = rate_ratio(&f, &g, e);
				if (!isnan(q))
					json_double(&j, c->evs[e].name, q);
				else
					json_null(&j, c->evs[e].name);
			}
			json_object_end(&j);
			json_object_end(&j);
		}
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		return;
	}
	frame_text_head(stdout, r);
	if (c->nsides == 1) {
		/* perf divides by task-clock; dbtap by the window's wall time: say which */
		printf("performance counter stats for %s (/sec is per wall-clock second):\n\n",
		       sides[0].desc);
		print_figures_text(c, &f);
		return;
	}
	printf("counter stats\n   A: %s\n   B: %s%s\n\n", sides[0].desc, sides[1].desc,
	       sides[1].is_saved ? "\n   (B/A compares per-second rates: the windows differ)" : "");
	printf(" %-24s %18s %18s %9s\n", "event", "A", "B", "B/A");
	for (int e = 0; e < c->nev; e++) {
		char a[64], b[64];
		bool clk = counter_event_is_clock(&c->evs[e]);
		double div = clk ? 1e6 : 1;
		if (f.counted[e])
			clk ? snprintf(a, sizeof(a), "%.2f ms", f.val[e] / div)
			    : (void)fmt_count(f.val[e], a, sizeof(a));
		else
			snprintf(a, sizeof(a), "%s", f.err[e] ? "<not supported>" : "<not counted>");
		if (g.counted[e])
			clk ? snprintf(b, sizeof(b), "%.2f ms", g.val[e] / div)
			    : (void)fmt_count(g.val[e], b, sizeof(b));
		else
			snprintf(b, sizeof(b), "%s", g.reason[e] && !strcmp(g.reason[e],
					"not in the saved run") ? "<not saved>" :
				 g.err[e] || g.reason[e] ? "<not supported>" : "<not counted>");
		printf(" %-24s %18s %18s", c->evs[e].name, a, b);
		if (!isnan(rate_ratio(&f, &g, e)))
			printf(" %9.3f\n", rate_ratio(&f, &g, e));
		else
			printf(" %9s\n", "-");
	}
	for (int e = 0; e < c->nev; e++)
		if (f.err[e]) {
			printf("\n (%s: %s)\n", c->evs[e].name, reason_of(&c->evs[e], f.err[e]));
			break;
		}
}

/* ---- per statement ---- */

/* What is shown of one statement of one side, live or from a saved run. */
struct rowview {
	bool present;
	const char *text;
	uint64_t calls, cpus, multi_cpu;
	struct stmt_fig ev[STAT_MAX_EVENTS];
	const char *reason[STAT_MAX_EVENTS]; /* why ev[e] is not ok */
	bool sched[STAT_MAX_EVENTS];         /* context-switches, cpu-migrations */
	struct stmt_fig wall, cs, migr;
};

static enum savedrun_unit ev_unit(const struct perf_event_desc *ev)
{
	return counter_event_is_clock(ev) ? SAVEDRUN_NS : SAVEDRUN_COUNT;
}

static void rowview_live(const struct stat_cmd *c, const struct side *s, const struct stmt_row *r,
			 struct rowview *v)
{
	memset(v, 0, sizeof(*v));
	if (!r)
		return;
	v->present = true;
	v->text = r->text;
	v->calls = r->agg.calls;
	v->cpus = r->agg.cpus;
	v->multi_cpu = r->agg.multi_cpu;
	for (int e = 0; e < c->nev; e++) {
		int fig = stat_probe_fig(s->probe, e);
		int slot = fig >= 0 && fig < STAT_MAX_EVENTS ? fig : -1;
		stmt_row_fig(r, fig, slot, &v->ev[e]);
		v->sched[e] = fig == STAT_FIG_CS || fig == STAT_FIG_MIGR;
		v->reason[e] = fig < 0 ? reason_of(&c->evs[e], stat_probe_errors(s->probe)[e]) :
			       "not counted in any call (multiplexed out)";
	}
	stmt_row_fig(r, STAT_FIG_WALL, -1, &v->wall);
	stmt_row_fig(r, STAT_FIG_CS, -1, &v->cs);
	stmt_row_fig(r, STAT_FIG_MIGR, -1, &v->migr);
}

static void rowview_saved(const struct stat_cmd *c, const struct savedrun *sr, int i,
			  struct rowview *v)
{
	struct savedrun_row r;
	const char *why;

	memset(v, 0, sizeof(*v));
	savedrun_row(sr, i, &r);
	v->present = true;
	v->text = r.text;
	v->calls = r.calls;
	v->multi_cpu = r.multi_cpu;
	v->cpus = r.cpus;
	for (int e = 0; e < c->nev; e++) {
		const struct perf_event_attr *a = &c->evs[e].attr;
		savedrun_row_fig(&r, c->evs[e].name, true, ev_unit(&c->evs[e]), &v->ev[e],
				 &v->reason[e]);
		v->sched[e] = a->type == PERF_TYPE_SOFTWARE &&
			      (a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
			       a->config == PERF_COUNT_SW_CPU_MIGRATIONS);
	}
	savedrun_row_fig(&r, "wall", false, SAVEDRUN_US, &v->wall, &why);
	savedrun_row_fig(&r, "context_switches", false, SAVEDRUN_COUNT, &v->cs, &why);
	savedrun_row_fig(&r, "cpu_migrations", false, SAVEDRUN_COUNT, &v->migr, &why);
}

static void json_rowview(struct json *j, const struct stat_cmd *c, const struct rowview *v)
{
	json_uint(j, "calls", v->calls);
	if (!v->present)
		return;
	json_array_begin(j, "cpus");
	for (int cpu = 0; cpu < 64; cpu++)
		if (v->cpus & (1ull << cpu))
			json_int(j, NULL, cpu);
	json_array_end(j);
	json_uint(j, "multi_cpu_calls", v->multi_cpu);
	json_object_begin(j, "events");
	for (int e = 0; e < c->nev; e++)
		savedrun_write_fig(j, c->evs[e].name, ev_unit(&c->evs[e]), &v->ev[e], v->reason[e]);
	json_object_end(j);
	/* measured for every statement, asked for or not; wall time is a latency: us */
	savedrun_write_fig(j, "wall", SAVEDRUN_US, &v->wall, NULL);
	savedrun_write_fig(j, "context_switches", SAVEDRUN_COUNT, &v->cs, NULL);
	savedrun_write_fig(j, "cpu_migrations", SAVEDRUN_COUNT, &v->migr, NULL);
}

static void text_fig_line(const char *name, bool clock, const struct stmt_fig *s,
			  const char *reason)
{
	if (!s->ok) {
		printf("   %-24s %s\n", name, reason ? reason : "-");
		return;
	}
	if (clock)
		printf("   %-24s %12.1f %12.1f %12.1f %14.1f  us\n", name, s->mean / 1e3,
		       s->p50 / 1e3, s->p99 / 1e3, s->sum / 1e3);
	else
		printf("   %-24s %12.1f %12" PRIu64 " %12" PRIu64 " %14" PRIu64 "\n", name, s->mean,
		       s->p50, s->p99, s->sum);
}

static void text_row(const struct stat_cmd *c, const struct rowview *v, const int *hide)
{
	printf("\n %-10llu %s\n", (unsigned long long)v->calls, v->text);
	printf("   %-24s %12s %12s %12s %14s\n", "per call", "mean", "p50", "p99", "total");
	for (int e = 0; e < c->nev; e++) {
		if (v->sched[e] || hide[e])
			continue; /* printed below / named once in the header */
		text_fig_line(c->evs[e].name, counter_event_is_clock(&c->evs[e]), &v->ev[e],
			      v->reason[e]);
	}
	text_fig_line("wall time", true, &v->wall, NULL);
	text_fig_line("context-switches", false, &v->cs, NULL);
	text_fig_line("cpu-migrations", false, &v->migr, NULL);
	printf("   ran on CPUs ");
	bool first = true;
	for (int cpu = 0; cpu < 64; cpu++)
		if (v->cpus & (1ull << cpu)) {
			printf("%s%d", first ? "" : ",", cpu);
			first = false;
		}
	printf("; on more than one: %llu calls (%.1f%%)\n", (unsigned long long)v->multi_cpu,
	       v->calls ? 100.0 * v->multi_cpu / v->calls : 0.0);
}

static void text_compare_row(const struct stat_cmd *c, const struct rowview *a,
			     const struct rowview *b)
{
	const char *text = a->present ? a->text : b->text;

	printf("\n %s\n   %-24s %14s %14s %9s\n", text, "mean per call", "A", "B", "B/A");
	printf("   %-24s %14llu %14llu\n", "calls", (unsigned long long)a->calls,
	       (unsigned long long)b->calls);
	for (int e = -1; e < c->nev + 2; e++) {
		const struct stmt_fig *fa, *fb;
		const char *name;
		bool clock;
		if (e == -1) {
			name = "wall time (us)";
			fa = &a->wall, fb = &b->wall, clock = true;
		} else if (e == c->nev) {
			name = "context-switches";
			fa = &a->cs, fb = &b->cs, clock = false;
		} else if (e == c->nev + 1) {
			name = "cpu-migrations";
			fa = &a->migr, fb = &b->migr, clock = false;
		} else {
			if (a->sched[e])
				continue;
			name = c->evs[e].name;
			fa = &a->ev[e], fb = &b->ev[e];
			clock = counter_event_is_clock(&c->evs[e]);
		}
		char xa[32] = "-", xb[32] = "-", xr[16] = "-", label[PERF_EVENT_NAME_MAX + 8];
		double div = clock ? 1e3 : 1;
		if (fa->ok)
			snprintf(xa, sizeof(xa), "%.1f", fa->mean / div);
		else if (a->present && e >= 0 && e < c->nev)
			snprintf(xa, sizeof(xa), "n/a");
		if (fb->ok)
			snprintf(xb, sizeof(xb), "%.1f", fb->mean / div);
		else if (b->present && e >= 0 && e < c->nev)
			snprintf(xb, sizeof(xb), "n/a");
		if (fa->ok && fb->ok && fa->mean > 0)
			snprintf(xr, sizeof(xr), "%.3f", fb->mean / fa->mean);
		snprintf(label, sizeof(label), "%s%s", name,
			 clock && e >= 0 && e < c->nev ? " (us)" : "");
		printf("   %-24s %14s %14s %9s\n", label, xa, xb, xr);
	}
}

/* The statements of one side for this report, as views, largest first by --sort. */
struct viewset {
	struct rowview *v;
	int n;
	struct stmt_table shown; /* live: owns the texts the views point into */
	struct stat_drops drops;
	uint64_t calls;
};

static double sort_value(const struct rowview *v, int sort)
{
	switch (sort) {
	case SORT_WALL:
		return v->wall.sum;
	case SORT_MEAN:
		return v->wall.mean;
	case SORT_P99:
		return v->wall.p99;
	case SORT_CALLS:
		return v->calls;
	default:
		return v->ev[sort].ok ? (double)v->ev[sort].sum : -1.0;
	}
}

/* Largest first by the --sort key, then by calls and text so the order is stable. */
static int cmp_view(const void *x, const void *y, void *ctx)
{
	const struct rowview *a = x, *b = y;
	int sort = *(const int *)ctx;
	double va = sort_value(a, sort), vb = sort_value(b, sort);

	if (va != vb)
		return va < vb ? 1 : -1;
	return a->calls < b->calls ? 1 : a->calls > b->calls ? -1 : strcmp(a->text, b->text);
}

/* --sort KEY: wall, mean, p99, calls, or one of the -e events. 0 or -1. */
static int parse_sort(const char *arg, struct stat_cmd *c)
{
	static const struct { const char *name; int key; } keys[] = {
		{ "wall", SORT_WALL }, { "mean", SORT_MEAN }, { "p99", SORT_P99 },
		{ "calls", SORT_CALLS },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(arg, keys[i].name)) {
			c->sort = keys[i].key;
			return 0;
		}
	for (int e = 0; e < c->nev; e++)
		if (!strcmp(arg, c->evs[e].name)) {
			c->sort = e;
			return 0;
		}
	error("unknown --sort key '%s'", arg);
	hint("--sort wall (total wall time, the default), mean, p99, calls, or an event "
	     "given with -e");
	return -1;
}

static void viewset_live(const struct stat_cmd *c, struct side *s, bool final,
			 struct viewset *vs)
{
	struct stat_snapshot snap;
	struct stmt_table now = { 0 }, none = { 0 };
	bool oom = false;

	memset(vs, 0, sizeof(*vs));
	if (stat_probe_read(s->probe, &snap) == 0) {
		oom = stmt_table_from_snapshot(&snap, c->by == SB_QUERY, &now) < 0;
		vs->drops = snap.drops;
	} else {
		oom = true;
	}
	stat_snapshot_free(&snap);
	/* the summary covers the whole run; interval reports their interval */
	if (stmt_table_delta(&now, final ? &none : &s->prev, &vs->shown) < 0)
		oom = true;
	if (oom)
		warning("out of memory: this report leaves statements out");
	stmt_table_free(&s->prev);
	s->prev = now;
	vs->v = calloc(vs->shown.n ? vs->shown.n : 1, sizeof(*vs->v));
	for (int i = 0; vs->v && i < vs->shown.n; i++) {
		rowview_live(c, s, &vs->shown.v[i], &vs->v[i]);
		vs->calls += vs->v[i].calls;
	}
	vs->n = vs->v ? vs->shown.n : 0;
	qsort_r(vs->v, vs->n, sizeof(*vs->v), cmp_view, (void *)&c->sort);
}

static void viewset_saved(const struct stat_cmd *c, const struct savedrun *sr,
			  struct viewset *vs)
{
	int n = savedrun_nrows(sr);

	memset(vs, 0, sizeof(*vs));
	vs->v = calloc(n ? n : 1, sizeof(*vs->v));
	for (int i = 0; vs->v && i < n; i++) {
		rowview_saved(c, sr, i, &vs->v[i]);
		vs->calls += vs->v[i].calls;
	}
	vs->n = vs->v ? n : 0;
	qsort_r(vs->v, vs->n, sizeof(*vs->v), cmp_view, (void *)&c->sort);
}

static void viewset_free(struct viewset *vs)
{
	free(vs->v);
	stmt_table_free(&vs->shown);
}

static const struct rowview *viewset_find(const struct viewset *vs, const char *text)
{
	for (int i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].text, text))
			return &vs->v[i];
	return NULL;
}

static void json_stmt(struct json *j, const struct stat_cmd *c, const struct rowview *a,
		      const struct rowview *b)
{
	json_object_begin(j, NULL);
	json_str(j, c->by == SB_QUERY ? "query" : "outcome", a->present ? a->text : b->text);
	json_rowview(j, c, a);
	if (c->nsides > 1) {
		json_object_begin(j, "compare");
		json_rowview(j, c, b);
		json_object_end(j);
	}
	json_object_end(j);
}

static void json_drops(struct json *j, const struct stat_drops *d)
{
	json_object_begin(j, "dropped");
	json_uint(j, "statements_map_full", d->agg_full);
	json_uint(j, "histogram_map_full", d->hist_full);
	json_uint(j, "in_progress_map_full", d->runs_full);
	json_uint(j, "counter_read_errors", d->read_err);
	json_object_end(j);
}

static void report_statements(struct stat_cmd *c, const struct frame_report *r)
{
	struct side *sides = c->sides;
	int nsides = c->nsides;
	bool final = r->kind == FRAME_SUMMARY;
	struct viewset vs[2];
	struct rowview none;
	struct json j;
	int hide[STAT_MAX_EVENTS] = { 0 };

	memset(&none, 0, sizeof(none));
	for (int i = 0; i < nsides; i++) {
		if (sides[i].is_saved)
			viewset_saved(c, &sides[i].saved, &vs[i]);
		else
			viewset_live(c, &sides[i], final, &vs[i]);
	}
	int limit = global.json ? vs[0].n : (c->top < vs[0].n ? c->top : vs[0].n);

	if (global.json) {
		json_init(&j);
		frame_json_begin(&j, r);
		json_str(&j, "target", sides[0].desc);
		json_array_begin(&j, by_keys[c->by].array);
		for (int i = 0; i < vs[0].n; i++) {
			const struct rowview *b = nsides > 1 ? viewset_find(&vs[1], vs[0].v[i].text) : NULL;
			json_stmt(&j, c, &vs[0].v[i], b ? b : &none);
		}
		/* statements only the other side ran */
		for (int i = 0; nsides > 1 && i < vs[1].n; i++)
			if (!viewset_find(&vs[0], vs[1].v[i].text))
				json_stmt(&j, c, &none, &vs[1].v[i]);
		json_array_end(&j);
		json_uint(&j, "calls", vs[0].calls);
		json_drops(&j, &vs[0].drops);
		if (nsides > 1) {
			json_object_begin(&j, "compare");
			json_str(&j, "target", sides[1].desc);
			if (sides[1].is_saved)
				json_double(&j, "duration_s", sides[1].saved.duration_s);
			json_uint(&j, "calls", vs[1].calls);
			if (!sides[1].is_saved)
				json_drops(&j, &vs[1].drops);
			json_object_end(&j);
		}
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		goto out;
	}

	frame_text_head(stdout, r);
	printf("per %s, %s\n", by_keys[c->by].name, sides[0].desc);
	if (nsides > 1)
		printf(" A: %s\n B: %s\n", sides[0].desc, sides[1].desc);
	for (int e = 0; e < c->nev; e++) {
		if (nsides > 1 || stat_probe_fig(sides[0].probe, e) >= 0)
			continue;
		hide[e] = 1;
		printf(" %s: %s\n", c->evs[e].name,
		       reason_of(&c->evs[e], stat_probe_errors(sides[0].probe)[e]));
	}
	if (!vs[0].n && (nsides == 1 || !vs[1].n))
		printf("\n no %s completed\n", c->by == SB_QUERY ? "statement" : "transaction");
	for (int i = 0; i < limit; i++) {
		const struct rowview *a = &vs[0].v[i];
		const struct rowview *b = nsides > 1 ? viewset_find(&vs[1], a->text) : NULL;
		if (nsides > 1)
			text_compare_row(c, a, b ? b : &none);
		else
			text_row(c, a, hide);
	}
	for (int i = 0, shown = 0; nsides > 1 && i < vs[1].n; i++) {
		const struct rowview *b = &vs[1].v[i];
		if (!viewset_find(&vs[0], b->text) && shown++ < c->top)
			text_compare_row(c, &none, b);
	}
	if (vs[0].n > limit)
		printf("\n (%d more; --top N or -j shows them)\n", vs[0].n - limit);
	for (int i = 0; i < nsides; i++) {
		const struct stat_drops *d = &vs[i].drops;
		if (d->agg_full || d->hist_full || d->runs_full || d->read_err)
			printf(" %s: lost: %llu statements (map full), %llu histogram samples, "
			       "%llu not followed, %llu counter reads\n", sides[i].desc,
			       (unsigned long long)d->agg_full, (unsigned long long)d->hist_full,
			       (unsigned long long)d->runs_full, (unsigned long long)d->read_err);
	}
out:
	for (int i = 0; i < nsides; i++)
		viewset_free(&vs[i]);
}

/* ---- the command ---- */

static int by_parse(struct stat_cmd *c, const char *arg, bool per)
{
	if (per) {
		for (size_t i = 0; i < sizeof(per_alias) / sizeof(per_alias[0]); i++)
			if (!strcmp(arg, per_alias[i].per)) {
				c->by = per_alias[i].by;
				return 0;
			}
		error("unknown --per value '%s'", arg);
		hint("--per is the older spelling of --by: --by pid|tid|type|database|user|query|"
		     "transaction");
		return -1;
	}
	for (int i = 1; i < NBY; i++)
		if (!strcmp(arg, by_keys[i].name)) {
			c->by = i;
			return 0;
		}
	error("bad --by '%s'", arg);
	hint("--by pid|tid|type|database|user|query|transaction");
	return -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct stat_cmd *c = ctx;

	switch (key) {
	case 'e':
		/* -e '' is an empty list, not a request for the defaults */
		if (!*arg) {
			error("-e '': no event named");
			hint("name events, e.g. -e task-clock,page-faults; without -e the "
			     "defaults are counted");
			return -1;
		}
		if (c->events.len)
			strbuf_addch(&c->events, ',');
		strbuf_addstr(&c->events, arg);
		return 0;
	case OPT_BY:
	case OPT_PER:
		return by_parse(c, arg, key == OPT_PER);
	case OPT_COMPARE:
		c->compare = arg;
		return 0;
	case OPT_TOP:
		return top_opt(&c->top, arg, "statements");
	case OPT_SORT:
		c->sort_arg = arg;
		return 0;
	}
	return -1;
}

/* --compare OTHER: pid:PID[,PID], tid:TID, pg[:TARGET], or a saved -j file. */
static int resolve_other(struct side *side, const char *other, const struct stat_cmd *c)
{
	struct target_opts o = { 0 };
	struct target *t = &side->t;
	int ret;

	if (!strncmp(other, "pid:", 4)) {
		o.pids = other + 4;
	} else if (!strncmp(other, "tid:", 4)) {
		o.tid = other + 4;
	} else if (!strcmp(other, "pg") || !strncmp(other, "pg:", 3)) {
		o.pg_set = true;
		o.pg = other[2] == ':' && other[3] ? other + 3 : NULL;
	} else if (access(other, F_OK) == 0) {
		enum savedrun_kind k = c->by == SB_QUERY ? SAVEDRUN_QUERY :
				       c->by == SB_TRANSACTION ? SAVEDRUN_TRANSACTION :
								 SAVEDRUN_COUNTING;
		struct strbuf sb = STRBUF_INIT;
		ret = savedrun_load(&side->saved, other, k);
		if (ret)
			return ret;
		side->is_saved = true;
		strbuf_addf(&sb, "saved run %s (%s)", other, side->saved.target);
		side->desc = strbuf_detach(&sb);
		return 0;
	} else {
		error("cannot compare with '%s': not a target nor a file", other);
		hint("--compare pid:PID[,PID], tid:TID, pg:[DATADIR|PORT|PID], or a file saved "
		     "with 'dbtap -j stat ... > FILE'");
		return EXIT_USAGE;
	}
	ret = target_resolve(t, &o, true);
	if (!ret)
		side->desc = strdup(target_describe(t));
	return ret;
}

static void report(void *ctx, const struct frame_report *r)
{
	struct stat_cmd *c = ctx;

	if (r->kind == FRAME_SUMMARY && !strcmp(r->end, "target exited"))
		warning("%s has exited: its counts are up to its exit", c->sides[0].desc);
	if (by_stmt(c->by))
		report_statements(c, r);
	else
		report_counters(c, r);
}

/* Closes the counters, detaches the probes, frees: safe twice. */
static void cleanup(void *ctx)
{
	struct stat_cmd *c = ctx;

	for (int i = 0; i < 2; i++) {
		struct side *s = &c->sides[i];
		if (s->cs_init)
			counter_set_free(&s->cs);
		s->cs_init = false;
		stat_probe_destroy(s->probe);
		s->probe = NULL;
		savedrun_free(&s->saved);
		stmt_table_free(&s->prev);
		target_free(&s->t);
		free(s->desc);
		s->desc = NULL;
	}
	free(c->evs);
	c->evs = NULL;
	strbuf_release(&c->events);
}

/* Opens each measured side's counters or probe; says what cannot be counted. */
static int open_sides(struct stat_cmd *c)
{
	for (int i = 0; i < c->nsides; i++) {
		struct side *s = &c->sides[i];
		const int *err;
		int counted, ret;
		if (s->is_saved)
			continue;
		if (by_stmt(c->by)) {
			ret = stat_probe_open(&s->probe, &s->t, c->by == SB_QUERY, c->evs, c->nev);
			if (ret)
				return ret;
			err = stat_probe_errors(s->probe);
			counted = stat_probe_counted(s->probe);
		} else {
			ret = side_open_counters(s, c);
			if (ret)
				return ret;
			err = s->cs.err;
			counted = counter_set_counted(&s->cs);
		}
		if (i == 0 || !counted) {
			ret = report_open_errors(c, err, counted);
			if (ret)
				return ret;
			warn_multiplexing(c, err);
		}
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct side sides[2];
	struct stat_cmd c = { .top = 10, .events = STRBUF_INIT, .sides = sides, .nsides = 1 };
	const struct frame_ops ops = {
		.report = report,
		.teardown = cleanup,
		.teardown_what = "closing the counters and detaching the probes",
	};
	int ret;

	memset(sides, 0, sizeof(sides));
	ret = frame_parse(&c.f, &stat_frame, argc, argv, on_opt, &c);
	if (ret) {
		cleanup(&c);
		return frame_status(ret);
	}
	ret = EXIT_USAGE;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("events go after -e: dbtap stat -e task-clock,page-faults -p PID");
		goto fail;
	}
	if (perf_event_parse_list(c.events.len ? c.events.buf : perf_event_defaults, &c.evs,
				  &c.nev))
		goto fail;
	c.sort = SORT_WALL;
	if (c.sort_arg && parse_sort(c.sort_arg, &c))
		goto fail;
	if (c.nev > STAT_MAX_EVENTS) {
		error("%d events: at most %d can be counted in one run", c.nev, STAT_MAX_EVENTS);
		hint("split them over two runs");
		goto fail;
	}
	if (c.compare && c.by != SB_NONE && !by_stmt(c.by)) {
		error("--compare compares totals or statements, not --by %s", by_keys[c.by].name);
		hint("drop --by, or use --by query or --by transaction");
		goto fail;
	}
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true; /* the only cluster running here */
	ret = target_resolve(&sides[0].t, &c.f.to, true);
	if (ret)
		goto fail;
	sides[0].desc = strdup(target_describe(&sides[0].t));
	if (c.by == SB_TYPE && sides[0].t.kind != TARGET_PG)
		warning("--by type without --pg: processes are grouped by their command name");
	if (c.compare) {
		ret = resolve_other(&sides[1], c.compare, &c);
		if (ret)
			goto fail;
		c.nsides = 2;
	}
	ret = open_sides(&c);
	if (ret)
		goto fail;

	for (int i = 0; i < c.nsides; i++)
		if (!by_stmt(c.by) && !sides[i].is_saved)
			counter_set_enable(&sides[i].cs);
	c.f.target = &sides[0].t;
	frame_start(&c.f);
	/* on stderr, once everything is attached: scripts wait for this line */
	fprintf(stderr, "counting %s%s%s%s\n", sides[0].desc, c.nsides > 1 ? " and " : "",
		c.nsides > 1 ? sides[1].desc : "", c.f.time.duration ? "" : "; Ctrl-C to stop");
	return frame_run(&c.f, &ops, &c);
fail:
	cleanup(&c);
	return ret;
}
