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
#include "perf/counter.h"
#include "perf/event.h"
#include "pg/probes.h"
#include "report/hist.h"
#include "report/jsonread.h"
#include "report/stmt.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/runloop.h"
#include "util/strbuf.h"

enum stat_per { PER_NONE, PER_PROCESS, PER_THREAD, PER_QUERY, PER_TRANSACTION };
static const char *const per_names[] = { "", "process", "thread", "query", "transaction" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap stat [-e EVENT[,EVENT...]] [--pg [TARGET] | -p PID[,PID] | -t TID]\n"
		"                  [--per process|thread|query|transaction] [-i SECS] [-d SECS]\n"
		"                  [--compare OTHER] [--top N] [--sort KEY] [-j]\n\n"
		"Counts events as perf stat does, for a cluster, processes or one thread. With\n"
		"--per query or --per transaction the counters are read in the kernel at\n"
		"PostgreSQL's USDT probes: each statement's own counts, its CPUs, its migrations.\n\n"
		"  -e, --event LIST     events by perf's names: task-clock, cpu-clock,\n"
		"                       context-switches, cpu-migrations, page-faults,\n"
		"                       minor-faults, major-faults, instructions, cycles,\n"
		"                       branches, branch-misses, cache-references, cache-misses,\n"
		"                       L1-dcache-load-misses, dTLB-load-misses, iTLB-load-misses,\n"
		"                       rNNNN (raw), PMU names libpfm4 knows; :u :k modifiers\n"
		"                       (default: task-clock, context-switches, cpu-migrations,\n"
		"                       page-faults, cycles, instructions, branches, branch-misses)\n"
		"      --pg [TARGET]    every process of a cluster, later backends included\n"
		"                       (data directory, port or postmaster pid; alone, or\n"
		"                       with no target option at all: the only cluster)\n"
		"  -p PID[,PID]         those processes and all their threads\n"
		"  -t TID               one thread\n"
		"      --per WHAT       process, thread: a report per process or thread;\n"
		"                       query, transaction: counts per statement (USDT)\n"
		"  -i, --interval SECS  a report every SECS, with the figures of that interval\n"
		"  -d, --duration SECS  stop after SECS (default: at Ctrl-C)\n"
		"      --compare OTHER  a second target measured the same way, side by side:\n"
		"                       pid:PID[,PID], tid:TID, pg:[TARGET], or FILE: a run\n"
		"                       saved with 'dbtap -j stat ... > FILE'\n"
		"      --top N          statements printed per report (default 10; -j: all)\n"
		"      --sort KEY       which statements --top keeps, largest first: wall (total\n"
		"                       wall time, the default), mean, p99 (wall time per call),\n"
		"                       calls, or an -e event's total\n"
		"  -j, --json           one JSON object per report line\n");
}

struct stat_cmd {
	struct perf_event_desc *evs;
	int nev;
	enum stat_per per;
	struct time_opts time;
	const char *compare;
	int top;
	int sort; /* SORT_* or an event's index: what --top keeps the largest of */
	struct target_opts topts;
};

/* --sort: statements by their total wall time (default), mean, p99, calls, or an event. */
enum { SORT_WALL = -1, SORT_MEAN = -2, SORT_P99 = -3, SORT_CALLS = -4 };

/* A run saved with -j, compared with: its total lines. */
struct saved_run {
	struct jv **lines;
	int nlines;
	const struct jv *total;    /* counting modes: the last "total" line */
	const struct jv **rows;    /* per statement: the "total" statement lines */
	int nrows;
};

/* A measured side: the target and its counters or its per-statement probe. */
struct side {
	struct saved_run *saved;   /* --compare FILE: nothing is measured */
	struct target t;
	char *desc;
	struct counter_set cs;
	bool cs_init;
	struct stat_probe *probe;
	struct stmt_table prev; /* per statement: the previous report's table, for intervals */
	struct stat_drops drops;
};

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
	return counter_set_open_target(&s->cs, &s->t, c->per == PER_THREAD);
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

/* Units summed: counts add up, enabled/running is the longest (threads run side by side). */
static void side_figures(const struct stat_cmd *c, struct side *s, int unit, bool since_start,
			 double seconds, struct figures *f)
{
	struct counter_value w[STAT_MAX_EVENTS], sum[STAT_MAX_EVENTS];

	memset(sum, 0, sizeof(sum));
	for (int u = 0; u < s->cs.nunits; u++) {
		if (unit >= 0 && u != unit)
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

static void json_figures(struct json *j, const char *key, const struct stat_cmd *c,
			 const struct figures *f)
{
	json_object_begin(j, key);
	for (int e = 0; e < c->nev; e++) {
		json_object_begin(j, c->evs[e].name);
		json_bool(j, "counted", f->counted[e]);
		if (f->counted[e]) {
			json_uint(j, "value", (uint64_t)llround(f->val[e]));
			json_str(j, "unit", counter_event_is_clock(&c->evs[e]) ? "ns" : "");
			json_double(j, "per_s", f->seconds > 0 ? f->val[e] / f->seconds : NAN);
			json_double(j, "running_pct", f->pct[e]);
		} else {
			json_null(j, "value");
			json_str(j, "reason", fig_reason(c, f, e));
		}
		json_object_end(j);
	}
	json_object_end(j);
	json_object_begin(j, key == NULL ? "metrics" : "metrics");
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

/* A saved counting run's total as figures of the events counted now. */
static void saved_figures(const struct stat_cmd *c, const struct saved_run *sr,
			  struct figures *f)
{
	const struct jv *evs = jv_get(sr->total, "events");

	memset(f, 0, sizeof(*f));
	f->nev = c->nev;
	f->seconds = jv_num(jv_get(sr->total, "seconds"), 0);
	for (int e = 0; e < c->nev; e++) {
		const struct jv *o = jv_get(evs, c->evs[e].name);
		if (!o) {
			f->reason[e] = "not in the saved run";
			continue;
		}
		f->counted[e] = jv_bool(jv_get(o, "counted"), false);
		f->val[e] = jv_num(jv_get(o, "value"), 0);
		f->pct[e] = jv_num(jv_get(o, "running_pct"), 100);
		if (!f->counted[e])
			f->reason[e] = jv_str(jv_get(o, "reason"), "not counted");
	}
	counter_metrics_compute(c->evs, f->val, f->counted, c->nev, f->seconds, &f->m);
}

static const char *unit_type(struct side *s, pid_t pid)
{
	if (s->t.kind != TARGET_PG)
		return NULL;
	if (pid == s->t.pg.postmaster)
		return "postmaster (and the processes it forked since)";
	const char *ty = target_proc_type(&s->t, pid);
	return ty && *ty ? ty : NULL;
}

static void report_counters(const struct stat_cmd *c, struct side *sides, int nsides,
			    const char *kind, double t_s, double seconds, bool since_start)
{
	struct figures f, g;
	struct json j;

	json_init(&j);
	if (c->per == PER_PROCESS || c->per == PER_THREAD) {
		struct side *s = &sides[0];
		for (int u = 0; u < s->cs.nunits; u++) {
			struct counter_unit *cu = &s->cs.units[u];
			const char *ty = unit_type(s, cu->pid);
			side_figures(c, s, u, since_start, seconds, &f);
			if (global.json) {
				json_object_begin(&j, NULL);
				json_str(&j, "report", kind);
				json_double(&j, "time_s", t_s);
				json_double(&j, "seconds", seconds);
				json_str(&j, "per", per_names[c->per]);
				json_int(&j, "pid", cu->pid);
				if (cu->tid)
					json_int(&j, "tid", cu->tid);
				json_str(&j, "type", ty);
				json_bool(&j, "exited", cu->gone);
				json_figures(&j, "events", c, &f);
				json_object_end(&j);
				json_flush_line(&j, stdout);
			} else if (c->nev > 4) {
				/* too many columns for a table under 100 columns: blocks */
				printf("\n %s %d%s%s%s (%.2f s):\n\n",
				       cu->tid ? "thread" : "pid", cu->tid ? cu->tid : cu->pid,
				       ty ? " " : "", ty ? ty : "", cu->gone ? ", exited" : "",
				       seconds);
				print_figures_text(c, &f);
			} else {
				/* a table: one row per process or thread, one column per event */
				if (u == 0) {
					printf("\n Performance counter stats per %s, %s (%.2f s):\n\n",
					       per_names[c->per], s->desc, seconds);
					printf(" %8s", c->per == PER_THREAD ? "TID" : "PID");
					for (int e = 0; e < c->nev; e++) {
						char h[PERF_EVENT_NAME_MAX + 8];
						snprintf(h, sizeof(h), "%s%s", c->evs[e].name,
							 counter_event_is_clock(&c->evs[e]) ? "(ms)" : "");
						printf(" %16.16s", h);
					}
					printf("  %s\n", s->t.kind == TARGET_PG ? "TYPE" : "");
				}
				printf(" %8d", cu->tid ? cu->tid : cu->pid);
				for (int e = 0; e < c->nev; e++) {
					char num[64];
					if (!f.counted[e])
						printf(" %16s", f.err[e] ? "<not supported>" : "<not counted>");
					else if (counter_event_is_clock(&c->evs[e]))
						printf(" %16.2f", f.val[e] / 1e6);
					else
						printf(" %16s", fmt_count(f.val[e], num, sizeof(num)));
				}
				printf("  %s%s\n", ty ? ty : "", cu->gone ? " (exited)" : "");
			}
		}
		json_release(&j);
		return;
	}
	side_figures(c, &sides[0], -1, since_start, seconds, &f);
	if (nsides > 1)
		sides[1].saved ? saved_figures(c, sides[1].saved, &g) :
				 side_figures(c, &sides[1], -1, since_start, seconds, &g);
	if (global.json) {
		json_object_begin(&j, NULL);
		json_str(&j, "report", kind);
		json_double(&j, "time_s", t_s);
		json_double(&j, "seconds", seconds);
		json_str(&j, "target", sides[0].desc);
		json_figures(&j, "events", c, &f);
		if (nsides > 1) {
			json_object_begin(&j, "compare");
			json_str(&j, "target", sides[1].desc);
			json_figures(&j, "events", c, &g);
			json_object_begin(&j, "ratio");
			for (int e = 0; e < c->nev; e++) {
				double r = rate_ratio(&f, &g, e);
				if (!isnan(r))
					json_double(&j, c->evs[e].name, r);
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
	json_release(&j);
	if (nsides == 1) {
		/* perf divides by task-clock; dbtap by the window's wall time: say which */
		printf("\n Performance counter stats for %s (%.2f s%s; /sec is per wall-clock "
		       "second):\n\n", sides[0].desc, seconds, since_start ? "" : ", interval");
		print_figures_text(c, &f);
		return;
	}
	printf("\n Counter stats, %.2f s%s:\n   A: %s\n   B: %s%s\n\n", seconds,
	       since_start ? "" : ", interval", sides[0].desc, sides[1].desc,
	       sides[1].saved ? "\n   (B/A compares per-second rates: the windows differ)" : "");
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

static void figsum_json_read(const struct jv *o, struct stmt_fig *s)
{
	memset(s, 0, sizeof(*s));
	if (!o || !jv_bool(jv_get(o, "counted"), false))
		return;
	s->ok = true;
	s->sum = jv_num(jv_get(o, "sum"), 0);
	s->mean = jv_num(jv_get(o, "mean"), 0);
	s->p50 = jv_num(jv_get(o, "p50"), 0);
	s->p99 = jv_num(jv_get(o, "p99"), 0);
	s->max = jv_num(jv_get(o, "max"), 0);
	s->n = jv_num(jv_get(o, "calls_counted"), 0);
}

static void rowview_saved(const struct stat_cmd *c, const struct jv *line, struct rowview *v)
{
	const struct jv *evs = jv_get(line, "events"), *cpus = jv_get(line, "cpus");

	memset(v, 0, sizeof(*v));
	if (!line)
		return;
	v->present = true;
	v->text = jv_str(jv_get(line, c->per == PER_QUERY ? "query" : "outcome"), "?");
	v->calls = jv_num(jv_get(line, "calls"), 0);
	v->multi_cpu = jv_num(jv_get(line, "multi_cpu_calls"), 0);
	for (int i = 0; cpus && cpus->type == JV_ARR && i < cpus->n; i++) {
		int cpu = jv_num(&cpus->items[i], -1);
		if (cpu >= 0 && cpu < 64)
			v->cpus |= 1ull << cpu;
	}
	for (int e = 0; e < c->nev; e++) {
		const struct jv *o = jv_get(evs, c->evs[e].name);
		const struct perf_event_attr *a = &c->evs[e].attr;
		figsum_json_read(o, &v->ev[e]);
		v->reason[e] = o ? jv_str(jv_get(o, "reason"), "not counted") : "not in the saved run";
		v->sched[e] = a->type == PERF_TYPE_SOFTWARE &&
			      (a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
			       a->config == PERF_COUNT_SW_CPU_MIGRATIONS);
	}
	figsum_json_read(jv_get(line, "wall_ns"), &v->wall);
	figsum_json_read(jv_get(line, "context_switches"), &v->cs);
	figsum_json_read(jv_get(line, "cpu_migrations"), &v->migr);
}

static void json_figsum(struct json *j, const char *key, const struct stmt_fig *s,
			const char *reason)
{
	json_object_begin(j, key);
	json_bool(j, "counted", s->ok);
	if (s->ok) {
		json_uint(j, "sum", s->sum);
		json_double(j, "mean", s->mean);
		json_uint(j, "p50", s->p50);
		json_uint(j, "p99", s->p99);
		json_uint(j, "max", s->max);
		json_uint(j, "calls_counted", s->n);
	} else {
		json_null(j, "sum");
		json_str(j, "reason", reason);
	}
	json_object_end(j);
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
		json_figsum(j, c->evs[e].name, &v->ev[e], v->reason[e]);
	json_object_end(j);
	/* measured for every statement, asked for or not */
	json_figsum(j, "wall_ns", &v->wall, NULL);
	json_figsum(j, "context_switches", &v->cs, NULL);
	json_figsum(j, "cpu_migrations", &v->migr, NULL);
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

/* The statements of one side for this report, as views, most called first. */
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
		oom = stmt_table_from_snapshot(&snap, c->per == PER_QUERY, &now) < 0;
		vs->drops = snap.drops;
	} else {
		oom = true;
	}
	stat_snapshot_free(&snap);
	/* the final report covers the whole run; interval reports their interval */
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

static void viewset_saved(const struct stat_cmd *c, const struct saved_run *sr,
			  struct viewset *vs)
{
	memset(vs, 0, sizeof(*vs));
	vs->v = calloc(sr->nrows ? sr->nrows : 1, sizeof(*vs->v));
	for (int i = 0; vs->v && i < sr->nrows; i++) {
		rowview_saved(c, sr->rows[i], &vs->v[i]);
		vs->calls += vs->v[i].calls;
	}
	vs->n = vs->v ? sr->nrows : 0;
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

static void json_stmt_line(struct json *j, const struct stat_cmd *c, struct side *sides,
			   int nsides, const char *kind, double t_s, double seconds,
			   const struct rowview *a, const struct rowview *b)
{
	const char *text = a->present ? a->text : b->text;

	json_object_begin(j, NULL);
	json_str(j, "report", kind);
	json_double(j, "time_s", t_s);
	json_double(j, "seconds", seconds);
	json_str(j, "per", per_names[c->per]);
	json_str(j, "target", sides[0].desc);
	json_str(j, c->per == PER_QUERY ? "query" : "outcome", text);
	json_rowview(j, c, a);
	if (nsides > 1) {
		json_object_begin(j, "compare");
		json_str(j, "target", sides[1].desc);
		json_rowview(j, c, b);
		json_object_end(j);
	}
	json_object_end(j);
	json_flush_line(j, stdout);
}

static void report_statements(const struct stat_cmd *c, struct side *sides, int nsides,
			      const char *kind, double t_s, double seconds, bool final)
{
	struct viewset vs[2];
	struct rowview none;
	struct json j;
	int hide[STAT_MAX_EVENTS] = { 0 };

	memset(&none, 0, sizeof(none));
	json_init(&j);
	for (int i = 0; i < nsides; i++) {
		if (sides[i].saved)
			viewset_saved(c, sides[i].saved, &vs[i]);
		else
			viewset_live(c, &sides[i], final, &vs[i]);
	}
	int limit = global.json ? vs[0].n : (c->top < vs[0].n ? c->top : vs[0].n);

	if (!global.json) {
		printf("\n Per %s, %.2f s%s: %s\n", per_names[c->per], seconds,
		       final ? "" : " (interval)", sides[0].desc);
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
			printf("\n no %s completed\n", c->per == PER_QUERY ? "statement" : "transaction");
	}
	for (int i = 0; i < limit; i++) {
		const struct rowview *a = &vs[0].v[i];
		const struct rowview *b = nsides > 1 ? viewset_find(&vs[1], a->text) : NULL;
		if (!b)
			b = &none;
		if (global.json)
			json_stmt_line(&j, c, sides, nsides, kind, t_s, seconds, a, b);
		else if (nsides > 1)
			text_compare_row(c, a, b);
		else
			text_row(c, a, hide);
	}
	/* statements only the other side ran */
	for (int i = 0, shown = 0; nsides > 1 && i < vs[1].n; i++) {
		const struct rowview *b = &vs[1].v[i];
		if (viewset_find(&vs[0], b->text))
			continue;
		if (global.json)
			json_stmt_line(&j, c, sides, nsides, kind, t_s, seconds, &none, b);
		else if (shown++ < c->top)
			text_compare_row(c, &none, b);
	}
	for (int i = 0; i < nsides; i++) {
		const struct stat_drops *d = &vs[i].drops;
		if (global.json) {
			json_object_begin(&j, NULL);
			json_str(&j, "report", final ? "summary" : "interval-summary");
			json_double(&j, "time_s", t_s);
			json_double(&j, "seconds", seconds);
			json_str(&j, "per", per_names[c->per]);
			json_str(&j, "target", sides[i].desc);
			json_int(&j, "statements", vs[i].n);
			json_uint(&j, "calls", vs[i].calls);
			if (!sides[i].saved) {
				json_object_begin(&j, "dropped");
				json_uint(&j, "statements_map_full", d->agg_full);
				json_uint(&j, "histogram_map_full", d->hist_full);
				json_uint(&j, "in_progress_map_full", d->runs_full);
				json_uint(&j, "counter_read_errors", d->read_err);
				json_object_end(&j);
			}
			json_object_end(&j);
			json_flush_line(&j, stdout);
		} else {
			if (i == 0 && vs[0].n > limit)
				printf("\n (%d more; --top N or -j shows them)\n", vs[0].n - limit);
			if (d->agg_full || d->hist_full || d->runs_full || d->read_err)
				printf(" %s: lost: %llu statements (map full), %llu histogram samples, "
				       "%llu not followed, %llu counter reads\n", sides[i].desc,
				       (unsigned long long)d->agg_full,
				       (unsigned long long)d->hist_full,
				       (unsigned long long)d->runs_full,
				       (unsigned long long)d->read_err);
		}
	}
	for (int i = 0; i < nsides; i++)
		viewset_free(&vs[i]);
	json_release(&j);
}

/* ---- the command ---- */

static bool side_alive(void *arg)
{
	struct side *s = arg;
	return target_alive(&s->t);
}

static int parse_per(const char *s, enum stat_per *per)
{
	for (int i = 1; i < 5; i++) {
		if (!strcmp(s, per_names[i])) {
			*per = i;
			return 0;
		}
	}
	error("unknown --per value '%s'", s);
	hint("--per process, --per thread, --per query or --per transaction");
	return -1;
}

static void saved_run_free(struct saved_run *sr)
{
	if (!sr)
		return;
	for (int i = 0; i < sr->nlines; i++)
		jv_free(sr->lines[i]);
	free(sr->lines);
	free(sr->rows);
	free(sr);
}

/*
 * A saved run is a file anyone may have edited: every figure used from it is checked
 * for its type and range before it is used (a 0-second run would divide by zero, a
 * string where a number belongs would be read as 0).
 */
#define SAVED_RUN_MAX (16u << 20)
#define SAVED_RUN_HINT "--compare takes a file saved with 'dbtap -j stat ... > FILE'"

/* NULL when o has no key or a number in [lo, hi] under it; else what is wrong. */
static const char *saved_num_bad(const struct jv *o, const char *key, double lo, double hi,
				 bool required)
{
	const struct jv *v = jv_get(o, key);

	if (!v || v->type == JV_NULL) /* null: a figure that was not counted */
		return required ? "is missing" : NULL;
	if (v->type != JV_NUM)
		return "is not a number";
	if (!(v->num >= lo && v->num <= hi))
		return v->num < lo && lo > 0 && v->num >= 0 ? "is 0" : "is out of range";
	return NULL;
}

/* The figures of one statistic ({"counted", "value"} or {"sum", "mean", ...}). */
static const char *saved_fig_bad(const struct jv *o, const char **key)
{
	static const char *const nums[] = { "value", "sum", "mean", "p50", "p99", "max",
					    "calls_counted", NULL };
	const struct jv *c = jv_get(o, "counted"), *r = jv_get(o, "reason");

	if (o->type != JV_OBJ)
		return *key = "", "is not an object";
	if (c && c->type != JV_BOOL)
		return *key = "counted", "is not true or false";
	if (r && r->type != JV_STR)
		return *key = "reason", "is not a string";
	for (int i = 0; nums[i]; i++) {
		const char *why = saved_num_bad(o, nums[i], 0, 1e300, false);
		if (why)
			return *key = nums[i], why;
	}
	*key = "running_pct";
	return saved_num_bad(o, "running_pct", 0, 100, false);
}

/* One "total" line: 0, or EXIT_USAGE with the key, the line and a hint printed. */
static int saved_line_check(const char *path, int lineno, const struct jv *v, bool counting)
{
	static const char *const figs[] = { "wall_ns", "context_switches", "cpu_migrations", NULL };
	const struct jv *evs = jv_get(v, "events"), *cpus = jv_get(v, "cpus");
	const char *why = NULL, *key = "seconds", *sub = NULL;
	char where[160];

	if (v->type != JV_OBJ) {
		why = "is not an object";
		key = "";
		goto bad;
	}
	why = saved_num_bad(v, "seconds", 1e-9, 1e9, counting);
	if (!why && (why = saved_num_bad(v, "calls", 0, 1e300, false)))
		key = "calls";
	if (!why && (why = saved_num_bad(v, "multi_cpu_calls", 0, 1e300, false)))
		key = "multi_cpu_calls";
	if (!why && evs && evs->type != JV_OBJ) {
		why = "is not an object";
		key = "events";
	}
	for (int i = 0; !why && evs && i < evs->n; i++) {
		why = saved_fig_bad(&evs->items[i], &sub);
		key = evs->keys[i];
	}
	for (int i = 0; !why && figs[i]; i++) {
		const struct jv *o = jv_get(v, figs[i]);
		if (o && (why = saved_fig_bad(o, &sub)))
			key = figs[i];
	}
	if (!why && cpus && cpus->type != JV_ARR) {
		why = "is not an array";
		key = "cpus";
	}
	for (int i = 0; !why && cpus && i < cpus->n; i++) {
		if (cpus->items[i].type != JV_NUM || !(cpus->items[i].num >= 0)) {
			why = "holds something other than a cpu number";
			key = "cpus";
		}
	}
	if (!why)
		return 0;
bad:
	if (sub && *sub)
		snprintf(where, sizeof(where), "\"%s\" of \"%s\"", sub, key);
	else
		snprintf(where, sizeof(where), "\"%s\"", key);
	error("'%s' line %d: %s %s", path, lineno, where, why);
	hint("the file was changed after dbtap saved it; save the run again with "
	     "'dbtap -j stat ... > FILE'");
	return EXIT_USAGE;
}

/*
 * Reads a run saved with `dbtap -j stat ... > FILE`: its final report must be of the
 * same kind (counting, or --per query / transaction) as this one. 0 or EXIT_USAGE.
 */
static int saved_run_load(const char *path, const struct stat_cmd *c, struct saved_run **out,
			  char **desc)
{
	struct saved_run *sr = calloc(1, sizeof(*sr));
	char *text = NULL, *line, *next;
	size_t len;
	const char *target = NULL, *key = c->per == PER_QUERY ? "query" : "outcome";
	bool per_stmt = c->per == PER_QUERY || c->per == PER_TRANSACTION;
	int lineno = 0;

	if (!sr) {
		error("out of memory");
		return EXIT_FAIL;
	}
	if (file_read_text(path, SAVED_RUN_MAX, "saved run", SAVED_RUN_HINT, &text, &len))
		goto fail;
	for (line = text; line < text + len; line = next) {
		const char *err = NULL;
		char *nl = strchr(line, '\n');

		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		struct jv *v = jv_parse(line, &err);
		if (!v) {
			error("'%s' line %d is not JSON: %s", path, lineno, err ? err : "?");
			hint(SAVED_RUN_HINT);
			goto fail;
		}
		if (!strcmp(jv_str(jv_get(v, "report"), ""), "total") &&
		    saved_line_check(path, lineno, v, !jv_get(v, "per"))) {
			jv_free(v);
			goto fail;
		}
		struct jv **nv = realloc(sr->lines, (sr->nlines + 1) * sizeof(*nv));
		if (!nv) {
			jv_free(v);
			goto fail;
		}
		sr->lines = nv;
		nv[sr->nlines++] = v;
	}
	for (int i = 0; i < sr->nlines; i++) {
		const struct jv *v = sr->lines[i];
		if (strcmp(jv_str(jv_get(v, "report"), ""), "total"))
			continue;
		const char *per = jv_str(jv_get(v, "per"), "");
		if (!per_stmt && !*per && jv_get(v, "events")) {
			sr->total = v;
			target = jv_str(jv_get(v, "target"), NULL);
		} else if (per_stmt && !strcmp(per, per_names[c->per]) && jv_get(v, key)) {
			const struct jv **nr = realloc(sr->rows, (sr->nrows + 1) * sizeof(*nr));
			if (!nr)
				goto fail;
			sr->rows = nr;
			nr[sr->nrows++] = v;
			target = jv_str(jv_get(v, "target"), NULL);
		}
	}
	if (per_stmt ? !sr->nrows : !sr->total) {
		error("'%s' holds no %s%s total to compare with", path, per_stmt ? "--per " : "",
		      per_stmt ? per_names[c->per] : "counting");
		hint("save a run of the same kind: dbtap -j stat%s%s ... > FILE",
		     per_stmt ? " --per " : "", per_stmt ? per_names[c->per] : "");
		goto fail;
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "saved run %s (%s)", path, target ? target : "?");
	*desc = strbuf_detach(&sb);
	free(text);
	*out = sr;
	return 0;
fail:
	free(text);
	saved_run_free(sr);
	return EXIT_USAGE;
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
		return saved_run_load(other, c, &side->saved, &side->desc);
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

int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "per", required_argument, NULL, 'R' },
		{ "compare", required_argument, NULL, 'C' },
		{ "top", required_argument, NULL, 'T' },
		{ "sort", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		TRACING_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct stat_cmd c = { .top = 10 };
	struct strbuf events = STRBUF_INIT;
	const char *sort = NULL;
	struct side sides[2];
	int nsides = 1, opt, ret = EXIT_USAGE;

	memset(sides, 0, sizeof(sides));
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":e:h" TRACING_SHORTOPTS, longopts,
				  NULL)) != -1) {
		int r = tracing_opt(&c.topts, &c.time, opt, argc, argv);
		if (r < 0)
			goto out;
		if (r)
			continue;
		switch (opt) {
		case 'e':
			/* -e '' is an empty list, not a request for the defaults */
			if (!*optarg) {
				error("-e '': no event named");
				hint("name events, e.g. -e task-clock,page-faults; without -e the "
				     "defaults are counted");
				goto out;
			}
			if (events.len)
				strbuf_addch(&events, ',');
			strbuf_addstr(&events, optarg);
			break;
		case 'R':
			if (parse_per(optarg, &c.per))
				goto out;
			break;
		case 'C':
			c.compare = optarg;
			break;
		case 'T':
			if (top_opt(&c.top, optarg, "statements") < 0)
				goto out;
			break;
		case 'S':
			sort = optarg;
			break;
		case 'h':
			usage(stdout);
			ret = EXIT_OK;
			goto out;
		default:
			ret = cmd_bad_option("stat", opt, argv);
			goto out;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("events go after -e: dbtap stat -e task-clock,page-faults -p PID");
		goto out;
	}
	if (perf_event_parse_list(events.len ? events.buf : perf_event_defaults, &c.evs, &c.nev))
		goto out;
	c.sort = SORT_WALL;
	if (sort && parse_sort(sort, &c))
		goto out;
	if (c.nev > STAT_MAX_EVENTS) {
		error("%d events: at most %d can be counted in one run", c.nev, STAT_MAX_EVENTS);
		hint("split them over two runs");
		goto out;
	}
	if (c.compare && (c.per == PER_PROCESS || c.per == PER_THREAD)) {
		error("--compare compares totals or statements, not --per %s", per_names[c.per]);
		hint("drop --per, or use --per query or --per transaction");
		goto out;
	}
	if (!c.topts.pg_set && !c.topts.pids && !c.topts.tid)
		c.topts.pg_set = true; /* the only cluster running here */
	ret = target_resolve(&sides[0].t, &c.topts, true);
	if (ret)
		goto out;
	sides[0].desc = strdup(target_describe(&sides[0].t));
	if (c.compare) {
		ret = resolve_other(&sides[1], c.compare, &c);
		if (ret)
			goto out;
		nsides = 2;
	}

	bool per_stmt = c.per == PER_QUERY || c.per == PER_TRANSACTION;
	for (int i = 0; i < nsides; i++) {
		const int *err;
		int counted;
		if (sides[i].saved)
			continue;
		if (per_stmt) {
			ret = stat_probe_open(&sides[i].probe, &sides[i].t, c.per == PER_QUERY,
					      c.evs, c.nev);
			if (ret)
				goto out;
			err = stat_probe_errors(sides[i].probe);
			counted = stat_probe_counted(sides[i].probe);
		} else {
			ret = side_open_counters(&sides[i], &c);
			if (ret)
				goto out;
			err = sides[i].cs.err;
			counted = counter_set_counted(&sides[i].cs);
		}
		if (i == 0 || !counted) {
			ret = report_open_errors(&c, err, counted);
			if (ret)
				goto out;
			warn_multiplexing(&c, err);
		}
	}

	struct runloop rl;
	for (int i = 0; i < nsides; i++)
		if (!per_stmt && !sides[i].saved)
			counter_set_enable(&sides[i].cs);
	runloop_init(&rl, c.time.interval, c.time.duration);
	/* on stderr, once everything is attached: scripts wait for this line */
	fprintf(stderr, "counting %s%s%s%s\n", sides[0].desc, nsides > 1 ? " and " : "",
		nsides > 1 ? sides[1].desc : "", c.time.duration ? "" : "; Ctrl-C to stop");
	for (;;) {
		enum runloop_event ev = runloop_wait(&rl, 200, side_alive, &sides[0]);
		bool last = ev != RUNLOOP_TICK;
		double t_s = runloop_total(&rl);
		double seconds = runloop_elapsed(&rl);

		if (last)
			seconds = t_s;
		if (per_stmt) {
			report_statements(&c, sides, nsides, last ? "total" : "interval", t_s,
					  seconds, last);
		} else {
			for (int i = 0; i < nsides; i++)
				if (!sides[i].saved)
					counter_set_read(&sides[i].cs);
			report_counters(&c, sides, nsides, last ? "total" : "interval", t_s, seconds,
					last);
		}
		if (last)
			break;
	}
	if (!target_alive(&sides[0].t))
		warning("%s has exited: its counts are up to its exit", sides[0].desc);
	ret = EXIT_OK;
out:
	for (int i = 0; i < 2; i++) {
		if (sides[i].cs_init)
			counter_set_free(&sides[i].cs);
		stat_probe_destroy(sides[i].probe);
		saved_run_free(sides[i].saved);
		stmt_table_free(&sides[i].prev);
		target_free(&sides[i].t);
		free(sides[i].desc);
	}
	free(c.evs);
	strbuf_release(&events);
	return ret;
}
