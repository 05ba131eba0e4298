/* Sparse log-linear histograms: sorted (bucket, count) pairs; percentiles as report/hist.c. */
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "report/sparsehist.h"

void sparse_hist_free(struct sparse_hist *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

static int reserve(struct sparse_hist *h, uint32_t n)
{
	if (n <= h->cap)
		return 0;
	uint32_t cap = h->cap ? h->cap : 4;
	while (cap < n)
		cap *= 2;
	struct sparse_bucket *v = realloc(h->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -1;
	h->v = v;
	h->cap = cap;
	return 0;
}

int sparse_hist_add(struct sparse_hist *h, uint32_t bucket, uint64_t count)
{
	if (!count)
		return 0;
	if (h->n && h->v[h->n - 1].bucket == bucket) {
		h->v[h->n - 1].count += count;
		return 0;
	}
	if (reserve(h, h->n + 1))
		return -1;
	if (h->n && h->v[h->n - 1].bucket > bucket)
		h->sorted = false;
	else if (!h->n)
		h->sorted = true;
	h->v[h->n].bucket = bucket;
	h->v[h->n++].count = count;
	return 0;
}

static int cmp_bucket(const void *a, const void *b)
{
	uint32_t x = ((const struct sparse_bucket *)a)->bucket;
	uint32_t y = ((const struct sparse_bucket *)b)->bucket;
	return x < y ? -1 : x > y;
}

void sparse_hist_finish(struct sparse_hist *h)
{
	uint32_t o = 0;

	if (h->sorted || !h->n) {
		h->sorted = true;
		return;
	}
	qsort(h->v, h->n, sizeof(*h->v), cmp_bucket);
	for (uint32_t i = 0; i < h->n; i++) {
		if (o && h->v[o - 1].bucket == h->v[i].bucket)
			h->v[o - 1].count += h->v[i].count;
		else
			h->v[o++] = h->v[i];
	}
	h->n = o;
	h->sorted = true;
}

int sparse_hist_copy(struct sparse_hist *dst, const struct sparse_hist *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->sorted = true;
	if (!src->n)
		return 0;
	if (reserve(dst, src->n))
		return -1;
	memcpy(dst->v, src->v, src->n * sizeof(*src->v));
	dst->n = src->n;
	dst->sorted = src->sorted;
	return 0;
}

/* out = a (+ or -) b over the union of their buckets, both sorted. */
static int combine(struct sparse_hist *out, const struct sparse_hist *a,
		   const struct sparse_hist *b, bool subtract)
{
	struct sparse_hist r = { .sorted = true };
	uint32_t i = 0, j = 0;

	if (reserve(&r, a->n + b->n))
		return -1;
	while (i < a->n || j < b->n) {
		uint32_t bucket;
		uint64_t x = 0, y = 0;
		if (j >= b->n || (i < a->n && a->v[i].bucket < b->v[j].bucket)) {
			bucket = a->v[i].bucket;
			x = a->v[i++].count;
		} else if (i >= a->n || b->v[j].bucket < a->v[i].bucket) {
			bucket = b->v[j].bucket;
			y = b->v[j++].count;
		} else {
			bucket = a->v[i].bucket;
			x = a->v[i++].count;
			y = b->v[j++].count;
		}
		uint64_t c = subtract ? (x >= y ? x - y : x) : x + y;
		if (c) {
			r.v[r.n].bucket = bucket;
			r.v[r.n++].count = c;
		}
	}
	free(out->v);
	*out = r;
	return 0;
}

int sparse_hist_merge(struct sparse_hist *dst, const struct sparse_hist *src)
{
	if (!src->n)
		return 0;
	return combine(dst, dst, src, false);
}

int sparse_hist_delta(struct sparse_hist *out, const struct sparse_hist *now,
		      const struct sparse_hist *before)
{
	memset(out, 0, sizeof(*out));
	return combine(out, now, before, true);
}

uint64_t sparse_hist_count(const struct sparse_hist *h)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < h->n; i++)
		n += h->v[i].count;
	return n;
}

uint64_t sparse_hist_percentile(const struct sparse_hist *h, double p)
{
	uint64_t total = sparse_hist_count(h), rank, seen = 0;

	if (!total)
		return 0;
	if (p <= 0)
		return hist_bucket_value(h->v[0].bucket);
	rank = hist_rank(p, total);
	for (uint32_t i = 0; i < h->n; i++) {
		seen += h->v[i].count;
		if (seen >= rank)
			return hist_bucket_value(h->v[i].bucket);
	}
	return sparse_hist_max(h);
}

uint64_t sparse_hist_max(const struct sparse_hist *h)
{
	return h->n ? hist_bucket_value(h->v[h->n - 1].bucket) : 0;
}
