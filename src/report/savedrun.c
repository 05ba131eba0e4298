/* stat's figures in JSON: written by stat -j, read back (and checked) for stat --compare FILE. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/savedrun.h"
#include "util/error.h"
#include "util/file.h"

#define SAVEDRUN_HINT "--compare takes a file saved with 'dbtap -j stat ... > FILE'"
#define EDITED_HINT "the file was changed after dbtap saved it; save the run again with " \
	"'dbtap -j stat ... > FILE'"

/* The keys of a figure, by unit: total, mean, p50, p99, max. */
static const char *const fig_keys[3][5] = {
	[SAVEDRUN_COUNT] = { "total", "mean_per_call", "p50_per_call", "p99_per_call",
			     "max_per_call" },
	[SAVEDRUN_NS] = { "total_ns", "mean_ns", "p50_ns", "p99_ns", "max_ns" },
	[SAVEDRUN_US] = { "total_us", "mean_us", "p50_us", "p99_us", "max_us" },
};

static const char *const kind_names[] = {
	[SAVEDRUN_COUNTING] = "counting",
	[SAVEDRUN_QUERY] = "--by query",
	[SAVEDRUN_TRANSACTION] = "--by transaction",
};

const char *savedrun_kind_name(enum savedrun_kind k)
{
	return kind_names[k];
}

void savedrun_write_count(struct json *j, const char *name, bool clock,
			  const struct savedrun_count *v, double seconds)
{
	json_object_begin(j, name);
	json_bool(j, "counted", v->counted);
	if (v->counted) {
		/* a count in full; one beyond 2^63 (only an edited saved run has it) as read */
		if (v->value >= 0 && v->value < 9e18)
			json_uint(j, clock ? "value_ns" : "value", (uint64_t)llround(v->value));
		else
			json_double(j, clock ? "value_ns" : "value", v->value);
		if (!clock)
			json_double(j, "per_s", seconds > 0 ? v->value / seconds : NAN);
		json_double(j, "running_pct", v->pct);
	} else {
		json_null(j, clock ? "value_ns" : "value");
		json_str(j, "reason", v->reason ? v->reason : "not counted");
	}
	json_object_end(j);
}

void savedrun_write_fig(struct json *j, const char *key, enum savedrun_unit u,
			const struct stmt_fig *s, const char *reason)
{
	const char *const *k = fig_keys[u];

	json_object_begin(j, key);
	json_bool(j, "counted", s->ok);
	if (!s->ok) {
		json_null(j, k[0]);
		if (reason)
			json_str(j, "reason", reason);
	} else if (u == SAVEDRUN_US) {
		/* measured in ns: microseconds with the nanoseconds kept as decimals */
		json_double(j, k[0], s->sum / 1e3);
		json_double(j, k[1], s->mean / 1e3);
		json_double(j, k[2], s->p50 / 1e3);
		json_double(j, k[3], s->p99 / 1e3);
		json_double(j, k[4], s->max / 1e3);
	} else {
		json_uint(j, k[0], s->sum);
		json_double(j, k[1], s->mean);
		json_uint(j, k[2], s->p50);
		json_uint(j, k[3], s->p99);
		json_uint(j, k[4], s->max);
	}
	if (s->ok)
		json_uint(j, "calls_counted", s->n);
	json_object_end(j);
}

/* ---- checking ---- */

/* Where a bad value is, for the message: "key", or "sub" of "key". */
struct where {
	const char *key, *sub;
	int row; /* -1: not in a row */
};

/* NULL when o has no key, null, or a number in [lo, hi] under it; else what is wrong. */
static const char *num_bad(const struct jv *o, const char *key, double lo, double hi,
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

/* One figure object: {"counted", "value"...} of a counting run or {"total"...} of a row. */
static const char *fig_bad(const struct jv *o, const char **key)
{
	static const char *const other[] = { "value", "value_ns", "per_s", "calls_counted", NULL };
	const struct jv *c = jv_get(o, "counted"), *r = jv_get(o, "reason");
	const char *why;

	if (o->type != JV_OBJ)
		return *key = "", "is not an object";
	if (c && c->type != JV_BOOL)
		return *key = "counted", "is not true or false";
	if (r && r->type != JV_STR && r->type != JV_NULL)
		return *key = "reason", "is not a string";
	for (int u = 0; u < 3; u++)
		for (int i = 0; i < 5; i++)
			if ((why = num_bad(o, fig_keys[u][i], 0, 1e300, false)))
				return *key = fig_keys[u][i], why;
	for (int i = 0; other[i]; i++)
		if ((why = num_bad(o, other[i], 0, 1e300, false)))
			return *key = other[i], why;
	*key = "running_pct";
	return num_bad(o, "running_pct", 0, 100, false);
}

/* An object of figures keyed by event name. */
static const char *events_bad(const struct jv *evs, struct where *w)
{
	const char *why = NULL;

	if (!evs)
		return NULL;
	w->key = "events";
	if (evs->type != JV_OBJ)
		return "is not an object";
	for (int i = 0; !why && i < evs->n; i++) {
		why = fig_bad(&evs->items[i], &w->sub);
		w->key = evs->keys[i];
	}
	return why;
}

static const char *row_bad(const struct jv *row, const char *text_key, struct where *w)
{
	static const char *const figs[] = { "wall", "context_switches", "cpu_migrations", NULL };
	static const char *const nums[] = { "calls", "multi_cpu_calls", NULL };
	const struct jv *t = jv_get(row, text_key), *cpus = jv_get(row, "cpus");
	const char *why;

	w->key = "";
	if (row->type != JV_OBJ)
		return "is not an object";
	w->key = text_key;
	if (!t || t->type != JV_STR)
		return t ? "is not a string" : "is missing";
	for (int i = 0; nums[i]; i++)
		if ((why = num_bad(row, w->key = nums[i], 0, 1e300, i == 0)))
			return why;
	if ((why = events_bad(jv_get(row, "events"), w)))
		return why;
	for (int i = 0; figs[i]; i++) {
		const struct jv *o = jv_get(row, figs[i]);
		w->key = figs[i];
		if (o && (why = fig_bad(o, &w->sub)))
			return why;
	}
	w->sub = NULL;
	w->key = "cpus";
	if (cpus && cpus->type != JV_ARR)
		return "is not an array";
	for (int i = 0; cpus && i < cpus->n; i++) {
		const struct jv *c = &cpus->items[i];
		if (c->type != JV_NUM || !(c->num >= 0 && c->num <= 65535) || c->num != floor(c->num))
			return "holds something other than a cpu number";
	}
	return NULL;
}

/* The summary's figures: 0, or EXIT_USAGE with the line and the key named. */
static int summary_check(const struct savedrun *sr, const char *name, int lineno)
{
	const struct jv *v = sr->summary;
	struct where w = { .key = "duration_s", .row = -1 };
	const char *why = num_bad(v, "duration_s", 1e-9, 1e9, true);
	char where[200];

	if (!why && jv_get(v, "target") && jv_get(v, "target")->type != JV_STR) {
		why = "is not a string";
		w.key = "target";
	}
	if (!why && sr->kind == SAVEDRUN_COUNTING)
		why = events_bad(sr->events, &w);
	for (int i = 0; !why && sr->rows && i < sr->rows->n; i++) {
		why = row_bad(&sr->rows->items[i],
			      sr->kind == SAVEDRUN_QUERY ? "query" : "outcome", &w);
		w.row = i;
	}
	if (!why)
		return 0;
	int o = 0;
	if (w.sub && *w.sub)
		o = snprintf(where, sizeof(where), "\"%s\" of \"%s\"", w.sub, w.key);
	else
		o = snprintf(where, sizeof(where), "\"%s\"", w.key);
	if (w.row >= 0 && o > 0 && (size_t)o < sizeof(where))
		snprintf(where + o, sizeof(where) - o, " of %s %d",
			 sr->kind == SAVEDRUN_QUERY ? "statement" : "transaction row", w.row + 1);
	error("'%s' line %d: %s %s", name, lineno, where, why);
	hint(EDITED_HINT);
	return EXIT_USAGE;
}

void savedrun_free(struct savedrun *sr)
{
	jv_free(sr->summary);
	memset(sr, 0, sizeof(*sr));
}

int savedrun_parse(struct savedrun *sr, const char *name, char *text, size_t len,
		   enum savedrun_kind want)
{
	char *line, *next;
	int lineno = 0, sumline = 0;
	const struct jv *a;

	memset(sr, 0, sizeof(*sr));
	for (line = text; line < text + len; line = next) {
		const char *err = NULL;
		char *nl = memchr(line, '\n', text + len - line);

		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		struct jv *v = jv_parse(line, &err);
		if (!v) {
			error("'%s' line %d is not JSON: %s", name, lineno, err ? err : "?");
			hint(SAVEDRUN_HINT);
			goto fail;
		}
		const char *kind = jv_str(jv_get(v, "report"), "");
		if (!strcmp(kind, "total")) {
			/* the reports before docs/json.md's envelope */
			jv_free(v);
			error("'%s' line %d: a report of an older dbtap (\"report\": \"total\")",
			      name, lineno);
			hint("save the run again with this dbtap: 'dbtap -j stat ... > FILE'");
			goto fail;
		}
		if (strcmp(kind, "summary")) {
			jv_free(v);
			continue;
		}
		jv_free(sr->summary);
		sr->summary = v;
		sumline = lineno;
	}
	if (!sr->summary) {
		error("'%s' holds no summary line to compare with", name);
		hint(SAVEDRUN_HINT);
		goto fail;
	}
	if ((a = jv_get(sr->summary, "statements")) && a->type == JV_ARR) {
		sr->kind = SAVEDRUN_QUERY;
		sr->rows = a;
	} else if ((a = jv_get(sr->summary, "transactions")) && a->type == JV_ARR) {
		sr->kind = SAVEDRUN_TRANSACTION;
		sr->rows = a;
	} else if ((a = jv_get(sr->summary, "events"))) {
		sr->kind = SAVEDRUN_COUNTING;
		sr->events = a;
	} else {
		error("'%s' line %d: the summary holds neither \"events\", \"statements\" nor "
		      "\"transactions\"", name, sumline);
		hint("--compare reads a run of dbtap stat, --by query or --by transaction: "
		     "'dbtap -j stat ... > FILE'");
		goto fail;
	}
	if (sr->kind != want) {
		error("'%s' is a saved %s run, not a %s run", name, kind_names[sr->kind],
		      kind_names[want]);
		hint("save a run of the same kind: dbtap -j stat%s ... > FILE",
		     want == SAVEDRUN_QUERY ? " --by query" :
		     want == SAVEDRUN_TRANSACTION ? " --by transaction" : "");
		goto fail;
	}
	if (summary_check(sr, name, sumline))
		goto fail;
	sr->duration_s = jv_num(jv_get(sr->summary, "duration_s"), 0);
	sr->target = jv_str(jv_get(sr->summary, "target"), "?");
	return 0;
fail:
	savedrun_free(sr);
	return EXIT_USAGE;
}

int savedrun_load(struct savedrun *sr, const char *path, enum savedrun_kind want)
{
	char *text = NULL;
	size_t len;
	int ret;

	memset(sr, 0, sizeof(*sr));
	if (file_read_text(path, SAVEDRUN_MAX, "saved run", SAVEDRUN_HINT, &text, &len))
		return EXIT_USAGE;
	ret = savedrun_parse(sr, path, text, len, want);
	free(text);
	return ret;
}

/* ---- reading ---- */

void savedrun_count(const struct savedrun *sr, const char *name, bool clock,
		    struct savedrun_count *out)
{
	const struct jv *o = jv_get(sr->events, name);
	const struct jv *val = jv_get(o, clock ? "value_ns" : "value");

	memset(out, 0, sizeof(*out));
	out->pct = 100;
	if (!o) {
		out->reason = "not in the saved run";
		return;
	}
	out->counted = jv_bool(jv_get(o, "counted"), false) && val && val->type == JV_NUM;
	out->value = jv_num(val, 0);
	out->pct = jv_num(jv_get(o, "running_pct"), 100);
	if (!out->counted)
		out->reason = jv_str(jv_get(o, "reason"), "not counted in the saved run");
}

int savedrun_nrows(const struct savedrun *sr)
{
	return sr->rows ? sr->rows->n : 0;
}

/* A checked figure (a number in [0, 1e300]) as an integer, saturating. */
static uint64_t u64_of(double d)
{
	return d >= 18446744073709551615.0 ? UINT64_MAX : d > 0 ? (uint64_t)d : 0;
}

static uint64_t count_of(const struct jv *v)
{
	return u64_of(jv_num(v, 0));
}

void savedrun_row(const struct savedrun *sr, int i, struct savedrun_row *out)
{
	const struct jv *row = &sr->rows->items[i], *cpus = jv_get(row, "cpus");

	memset(out, 0, sizeof(*out));
	out->o = row;
	out->text = jv_str(jv_get(row, sr->kind == SAVEDRUN_QUERY ? "query" : "outcome"), "?");
	out->calls = count_of(jv_get(row, "calls"));
	out->multi_cpu = count_of(jv_get(row, "multi_cpu_calls"));
	for (int c = 0; cpus && cpus->type == JV_ARR && c < cpus->n; c++) {
		double cpu = jv_num(&cpus->items[c], -1);
		if (cpu >= 0 && cpu < 64)
			out->cpus |= 1ull << (int)cpu;
	}
}

void savedrun_row_fig(const struct savedrun_row *r, const char *name, bool is_event,
		      enum savedrun_unit u, struct stmt_fig *s, const char **reason)
{
	const struct jv *o = jv_get(is_event ? jv_get(r->o, "events") : r->o, name);
	const char *const *k = fig_keys[u];
	double scale = u == SAVEDRUN_US ? 1e3 : 1;
	const struct jv *total = jv_get(o, k[0]);

	memset(s, 0, sizeof(*s));
	*reason = o ? jv_str(jv_get(o, "reason"), "not counted") : "not in the saved run";
	if (!o || !jv_bool(jv_get(o, "counted"), false) || !total || total->type != JV_NUM)
		return;
	s->ok = true;
	/* microseconds back to the nanoseconds they were written from */
	s->sum = u64_of(round(total->num * scale));
	s->mean = jv_num(jv_get(o, k[1]), 0) * scale;
	s->p50 = u64_of(round(jv_num(jv_get(o, k[2]), 0) * scale));
	s->p99 = u64_of(round(jv_num(jv_get(o, k[3]), 0) * scale));
	s->max = u64_of(round(jv_num(jv_get(o, k[4]), 0) * scale));
	s->n = count_of(jv_get(o, "calls_counted"));
}
