/* The per-statement table: rows by normalized text, interval deltas, per-figure summaries. */
#include <stdlib.h>
#include <string.h>

#include "pg/probes.h"
#include "report/stmt.h"

void stmt_table_free(struct stmt_table *t)
{
	for (int i = 0; i < t->n; i++) {
		free(t->v[i].text);
		for (int f = 0; f < STAT_FIGS; f++)
			sparse_hist_free(&t->v[i].h[f]);
	}
	free(t->v);
	hashmap_free(&t->by_text);
	memset(t, 0, sizeof(*t));
}

const struct stmt_row *stmt_table_find(const struct stmt_table *t, const char *text)
{
	uint64_t i;

	return hashmap_get_str(&t->by_text, text, &i) ? &t->v[i] : NULL;
}

struct stmt_row *stmt_table_get(struct stmt_table *t, const char *text)
{
	uint64_t i;

	if (hashmap_get_str(&t->by_text, text, &i))
		return &t->v[i];
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		struct stmt_row *nv = realloc(t->v, (size_t)cap * sizeof(*nv));
		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = cap;
	}
	struct stmt_row *r = &t->v[t->n];
	memset(r, 0, sizeof(*r));
	r->text = strdup(text);
	if (!r->text || hashmap_put_str(&t->by_text, text, t->n)) {
		free(r->text);
		return NULL;
	}
	t->n++;
	return r;
}

static void agg_add(struct stat_agg *d, const struct stat_agg *s)
{
	d->calls += s->calls;
	for (int f = 0; f < STAT_FIGS; f++)
		d->sum[f] += s->sum[f];
	for (int e = 0; e < STAT_MAX_EVENTS; e++)
		d->unscaled[e] += s->unscaled[e];
	d->cpus |= s->cpus;
	d->multi_cpu += s->multi_cpu;
}

static void agg_sub(struct stat_agg *d, const struct stat_agg *s)
{
	d->calls -= s->calls;
	for (int f = 0; f < STAT_FIGS; f++)
		d->sum[f] -= s->sum[f];
	for (int e = 0; e < STAT_MAX_EVENTS; e++)
		d->unscaled[e] -= s->unscaled[e];
	d->multi_cpu -= s->multi_cpu;
}

int stmt_table_from_snapshot(const struct stat_snapshot *snap, bool per_query,
			     struct stmt_table *out)
{
	char norm[STAT_TEXT_MAX * 2];

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < snap->n; i++) {
		const struct stat_stmt *s = &snap->v[i];
		const char *text;
		if (per_query) {
			pg_normalize_query(s->text, norm, sizeof(norm));
			text = norm;
		} else {
			text = s->key == STAT_KEY_COMMIT ? "commit" :
			       s->key == STAT_KEY_ABORT ? "abort" : "?";
		}
		struct stmt_row *r = stmt_table_get(out, text);
		if (!r)
			return -1;
		agg_add(&r->agg, &s->agg);
		for (int f = 0; f < STAT_FIGS; f++)
			if (sparse_hist_merge(&r->h[f], &s->h[f]))
				return -1;
	}
	return 0;
}

int stmt_table_delta(const struct stmt_table *now, const struct stmt_table *before,
		     struct stmt_table *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < now->n; i++) {
		const struct stmt_row *n = &now->v[i];
		const struct stmt_row *b = stmt_table_find(before, n->text);
		if (b && b->agg.calls == n->agg.calls)
			continue;
		struct stmt_row *r = stmt_table_get(out, n->text);
		if (!r)
			return -1;
		r->agg = n->agg;
		if (b)
			agg_sub(&r->agg, &b->agg);
		for (int f = 0; f < STAT_FIGS; f++) {
			static const struct sparse_hist none;
			if (sparse_hist_delta(&r->h[f], &n->h[f], b ? &b->h[f] : &none))
				return -1;
		}
	}
	return 0;
}

void stmt_row_fig(const struct stmt_row *r, int fig, int slot, struct stmt_fig *s)
{
	memset(s, 0, sizeof(*s));
	if (fig < 0 || fig >= STAT_FIGS)
		return;
	/* calls where the counter never ran (multiplexed out) are left out, not zeroed */
	s->n = r->agg.calls - (slot >= 0 && slot < STAT_MAX_EVENTS ? r->agg.unscaled[slot] : 0);
	s->ok = s->n > 0;
	s->sum = r->agg.sum[fig];
	s->mean = s->n ? (double)s->sum / s->n : 0;
	s->p50 = sparse_hist_percentile(&r->h[fig], 50);
	s->p99 = sparse_hist_percentile(&r->h[fig], 99);
	s->max = sparse_hist_max(&r->h[fig]);
}
