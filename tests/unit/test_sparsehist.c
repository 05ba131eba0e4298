/* Unit tests for report/sparsehist.c: the same answers as the dense report/hist.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "report/sparsehist.h"

static uint64_t next_value(unsigned *seed)
{
	*seed = *seed * 1103515245 + 12345;
	/* spread over many powers of two: 0 .. ~2^40 */
	unsigned e = (*seed >> 16) % 40;
	*seed = *seed * 1103515245 + 12345;
	return ((uint64_t)*seed << 8 ^ *seed) & ((1ull << e) - 1);
}

/* Values added in random order, as the kernel's map hands them out. */
static void fill(struct hist *d, struct sparse_hist *s, unsigned seed, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = next_value(&seed);
		hist_add(d, v, 1);
		assert_int_equal(sparse_hist_add(s, loglinear_index(v), 1), 0);
	}
	sparse_hist_finish(s);
}

static void assert_same(const struct hist *d, const struct sparse_hist *s)
{
	static const double ps[] = { 0.1, 1, 25, 50, 90, 99, 99.9, 100 };
	uint64_t n = 0;

	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		n += d->counts[i];
	assert_int_equal(sparse_hist_count(s), n);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		assert_int_equal(sparse_hist_percentile(s, ps[i]), hist_percentile(d, ps[i]));
	assert_int_equal(sparse_hist_max(s), hist_max(d));
	/* sorted, no repeats, no empty buckets */
	for (uint32_t i = 0; i < s->n; i++) {
		assert_true(s->v[i].count > 0);
		if (i)
			assert_true(s->v[i - 1].bucket < s->v[i].bucket);
	}
}

static void test_empty(void **state)
{
	struct sparse_hist s = { 0 };

	assert_int_equal(sparse_hist_count(&s), 0);
	assert_int_equal(sparse_hist_percentile(&s, 50), 0);
	assert_int_equal(sparse_hist_max(&s), 0);
	assert_int_equal(sparse_hist_add(&s, 7, 0), 0);
	assert_int_equal(s.n, 0);
	sparse_hist_free(&s);
}

static void test_like_dense(void **state)
{
	static struct hist d;
	struct sparse_hist s = { 0 };

	hist_reset(&d);
	fill(&d, &s, 42, 20000);
	assert_same(&d, &s);
	/* far fewer buckets than the dense array */
	assert_true(s.n < LL_BUCKETS);
	sparse_hist_free(&s);
}

static void test_merge_and_delta(void **state)
{
	static struct hist da, db, dsum, ddelta;
	struct sparse_hist a = { 0 }, b = { 0 }, sum = { 0 }, delta = { 0 };

	hist_reset(&da);
	hist_reset(&db);
	fill(&da, &a, 1, 5000);
	fill(&db, &b, 2, 3000);
	/* sum = a + b */
	assert_int_equal(sparse_hist_copy(&sum, &a), 0);
	assert_int_equal(sparse_hist_merge(&sum, &b), 0);
	dsum = da;
	hist_merge(&dsum, &db);
	assert_same(&dsum, &sum);
	/* (a + b) - a = b, as an interval of cumulative counts */
	assert_int_equal(sparse_hist_delta(&delta, &sum, &a), 0);
	hist_delta(&ddelta, &dsum, &da);
	assert_same(&ddelta, &delta);
	assert_same(&db, &delta);
	/* a bucket that shrank was reset: it counts as it is now, as in hist_delta */
	sparse_hist_free(&delta);
	assert_int_equal(sparse_hist_delta(&delta, &a, &sum), 0);
	hist_delta(&ddelta, &da, &dsum);
	assert_same(&ddelta, &delta);
	sparse_hist_free(&a);
	sparse_hist_free(&b);
	sparse_hist_free(&sum);
	sparse_hist_free(&delta);
}

/* Repeated and out-of-order buckets are merged by finish. */
static void test_finish_merges(void **state)
{
	struct sparse_hist s = { 0 };

	assert_int_equal(sparse_hist_add(&s, 100, 2), 0);
	assert_int_equal(sparse_hist_add(&s, 3, 1), 0);
	assert_int_equal(sparse_hist_add(&s, 100, 5), 0);
	assert_int_equal(sparse_hist_add(&s, 3, 1), 0);
	sparse_hist_finish(&s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].bucket, 3);
	assert_int_equal(s.v[0].count, 2);
	assert_int_equal(s.v[1].bucket, 100);
	assert_int_equal(s.v[1].count, 7);
	assert_int_equal(sparse_hist_percentile(&s, 50), hist_bucket_value(100));
	assert_int_equal(sparse_hist_percentile(&s, 20), 3);
	sparse_hist_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_like_dense),
		cmocka_unit_test(test_merge_and_delta),
		cmocka_unit_test(test_finish_merges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
