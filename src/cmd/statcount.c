/* dbtap stat's counting reports: per-event figures of a target, split --by a process label, or compared. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/stat.h"
#include "target/label.h"
#include "util/error.h"
#include "util/json.h"

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

static const char *fig_reason(const struct stat_cmd *c, const struct figures *f, int e)
{
	return f->reason[e] ? f->reason[e] : stat_reason(&c->evs[e], f->err[e]);
}

const char *stat_reason(const struct perf_event_desc *ev, int err)
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
		json_array_begin(&j, stat_by_keys[c->by].array);
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
				json_str(&j, stat_by_keys[c->by].name, *v ? v : NULL);
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
	printf("performance counter stats per %s, %s:\n", stat_by_keys[c->by].name, s->desc);
	for (int k = 0; k < n; k++)
		w = frame_width(w, group_text(c, s, &g[k], label, sizeof(label)));
	if (c->nev > 4) {
		/* too many columns for a table under 100 columns: blocks */
		for (int k = 0; k < n; k++) {
			side_figures(c, s, group_of, k, since_start, r->span_s, &f);
			printf("\n %s %s%s%s%s:\n\n", stat_by_keys[c->by].name,
			       group_text(c, s, &g[k], label, sizeof(label)),
			       c->by == SB_PID || c->by == SB_TID ? " " : "",
			       c->by == SB_PID || c->by == SB_TID ? g[k].l.type : "",
			       g[k].gone ? ", exited" : "");
			print_figures_text(c, &f);
		}
		goto out;
	}
	/* a table: one row per process, thread or label, one column per event */
	printf("\n %-*s", w, stat_by_keys[c->by].column);
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

void stat_report_counters(struct stat_cmd *c, const struct frame_report *r)
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
			printf("\n (%s: %s)\n", c->evs[e].name, stat_reason(&c->evs[e], f.err[e]));
			break;
		}
}

