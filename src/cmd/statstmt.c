/* dbtap stat's per-statement reports (--by query|transaction): each statement's figures, live or saved. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/stat.h"
#include "util/error.h"
#include "util/json.h"

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
		v->reason[e] = fig < 0 ? stat_reason(&c->evs[e], stat_probe_errors(s->probe)[e]) :
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
int stat_parse_sort(const char *arg, struct stat_cmd *c)
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

/*
 * DBTAP_STAT_SELF_TIME: the kernel side's parts (bpf/stat.h, STAT_ST_*) as one line on
 * stderr with the summary, for bench/ (ns include the clock's own reads).
 */
static void self_time_print(const struct side *s)
{
	static const char *const names[STAT_ST_N] = {
		"untraced", "switch_out", "switch_in", "recv", "recv_skip", "row", "text", "emit",
	};
	struct stat_self st[STAT_ST_N];

	/* the USDT path has no such parts */
	if (!s->probe || strcmp(stat_probe_source(s->probe), "pg_backend_status") ||
	    stat_probe_self_time(s->probe, st))
		return;
	fprintf(stderr, "{\"stat_self_time\":{");
	for (int k = 0; k < STAT_ST_N; k++)
		fprintf(stderr, "%s\"%s_runs\":%llu,\"%s_ns\":%llu", k ? "," : "", names[k],
			(unsigned long long)st[k].runs, names[k], (unsigned long long)st[k].ns);
	fprintf(stderr, "}}\n");
}

void stat_report_statements(struct stat_cmd *c, const struct frame_report *r)
{
	if (c->self_time && r->kind == FRAME_SUMMARY)
		for (int i = 0; i < c->nsides; i++)
			if (!c->sides[i].is_saved)
				self_time_print(&c->sides[i]);
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
		json_array_begin(&j, stat_by_keys[c->by].array);
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
		json_str(&j, "statements_from", stat_probe_source(sides[0].probe));
		json_uint(&j, "unseparated", vs[0].drops.unseparated);
		json_uint(&j, "rows_unreadable", vs[0].drops.unreadable);
		json_uint(&j, "stretches_unpaired", vs[0].drops.unpaired);
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
	printf("per %s, %s\n", stat_by_keys[c->by].name, sides[0].desc);
	if (nsides > 1)
		printf(" A: %s\n B: %s\n", sides[0].desc, sides[1].desc);
	for (int e = 0; e < c->nev; e++) {
		if (nsides > 1 || stat_probe_fig(sides[0].probe, e) >= 0)
			continue;
		hide[e] = 1;
		printf(" %s: %s\n", c->evs[e].name,
		       stat_reason(&c->evs[e], stat_probe_errors(sides[0].probe)[e]));
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
		if (d->unseparated)
			printf(" %s: %llu statements began with no switch after the one before"
			       " (their shared CPU stretch went to the later one)\n", sides[i].desc,
			       (unsigned long long)d->unseparated);
	}
out:
	for (int i = 0; i < nsides; i++)
		viewset_free(&vs[i]);
}

