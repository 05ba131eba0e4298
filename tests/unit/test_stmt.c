/* Unit tests for report/stmt.c: normalized merging, interval deltas, figure summaries. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "report/stmt.h"

/* A kernel statement with calls of the given wall times (ns). */
static void stmt_make(struct stat_stmt *s, uint64_t key, const char *text, const uint64_t *ns,
		      int n)
{
	memset(s, 0, sizeof(*s));
	s->key = key;
	snprintf(s->text, sizeof(s->text), "%s", text);
	for (int i = 0; i < n; i++) {
		s->agg.calls++;
		s->agg.sum[STAT_FIG_WALL] += ns[i];
		assert_int_equal(sparse_hist_add(&s->h[STAT_FIG_WALL], loglinear_index(ns[i]), 1), 0);
	}
	s->agg.cpus = 1ull << key;
	sparse_hist_finish(&s->h[STAT_FIG_WALL]);
}

static void snap_free(struct stat_snapshot *snap)
{
	stat_snapshot_free(snap);
}

/* Two kernel keys whose texts normalize alike are one row: calls, sums, buckets added. */
static void test_normalized_merge(void **state)
{
	static const uint64_t a[] = { 1000, 2000, 3000 }, b[] = { 100000 }, c[] = { 7 };
	struct stat_snapshot snap = { 0 };
	struct stmt_table t;

	snap.v = calloc(3, sizeof(*snap.v));
	snap.n = 3;
	stmt_make(&snap.v[0], 1, "select 1 as x", a, 3);
	stmt_make(&snap.v[1], 2, "select 42 as x", b, 1);
	stmt_make(&snap.v[2], 3, "select 1 as y", c, 1);
	assert_int_equal(stmt_table_from_snapshot(&snap, true, &t), 0);
	assert_int_equal(t.n, 2);
	const struct stmt_row *x = stmt_table_find(&t, "select $1 as x");
	const struct stmt_row *y = stmt_table_find(&t, "select $1 as y");
	assert_non_null(x);
	assert_non_null(y);
	assert_null(stmt_table_find(&t, "select 1 as x"));
	assert_int_equal(x->agg.calls, 4);
	assert_int_equal(x->agg.sum[STAT_FIG_WALL], 106000);
	assert_int_equal(x->agg.cpus, (1ull << 1) | (1ull << 2));
	assert_int_equal(sparse_hist_count(&x->h[STAT_FIG_WALL]), 4);

	struct stmt_fig f;
	stmt_row_fig(x, STAT_FIG_WALL, -1, &f);
	assert_true(f.ok);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.sum, 106000);
	assert_true(f.mean == 26500.0);
	/* p50 is the 2nd of 4 values (2000), within the log-linear bucket's 1/64 */
	assert_true(f.p50 >= 2000 - 2000 / 64 && f.p50 <= 2000 + 2000 / 64);
	assert_true(f.max >= 100000 - 100000 / 64 && f.max <= 100000 + 100000 / 64);
	stmt_row_fig(y, -1, -1, &f);
	assert_false(f.ok);
	stmt_table_free(&t);
	snap_free(&snap);
}

/* --per transaction: the keys are the outcomes. */
static void test_outcomes(void **state)
{
	static const uint64_t a[] = { 5 };
	struct stat_snapshot snap = { 0 };
	struct stmt_table t;

	snap.v = calloc(2, sizeof(*snap.v));
	snap.n = 2;
	stmt_make(&snap.v[0], STAT_KEY_COMMIT, "", a, 1);
	stmt_make(&snap.v[1], STAT_KEY_ABORT, "", a, 1);
	assert_int_equal(stmt_table_from_snapshot(&snap, false, &t), 0);
	assert_int_equal(t.n, 2);
	assert_non_null(stmt_table_find(&t, "commit"));
	assert_non_null(stmt_table_find(&t, "abort"));
	stmt_table_free(&t);
	snap_free(&snap);
}

/* An interval: only the rows that ran in it, with what ran in it. */
static void test_delta(void **state)
{
	static const uint64_t first[] = { 1000, 1000 }, later[] = { 1000, 1000, 50000 };
	static const uint64_t other[] = { 9 };
	struct stat_snapshot s1 = { 0 }, s2 = { 0 };
	struct stmt_table t1, t2, d;

	s1.v = calloc(2, sizeof(*s1.v));
	s1.n = 2;
	stmt_make(&s1.v[0], 1, "select 1", first, 2);
	stmt_make(&s1.v[1], 2, "select 1 as idle", other, 1);
	s2.v = calloc(2, sizeof(*s2.v));
	s2.n = 2;
	stmt_make(&s2.v[0], 1, "select 1", later, 3);
	stmt_make(&s2.v[1], 2, "select 1 as idle", other, 1);
	assert_int_equal(stmt_table_from_snapshot(&s1, true, &t1), 0);
	assert_int_equal(stmt_table_from_snapshot(&s2, true, &t2), 0);
	assert_int_equal(stmt_table_delta(&t2, &t1, &d), 0);
	assert_int_equal(d.n, 1);
	const struct stmt_row *r = stmt_table_find(&d, "select $1");
	assert_non_null(r);
	assert_int_equal(r->agg.calls, 1);
	assert_int_equal(r->agg.sum[STAT_FIG_WALL], 50000);
	assert_int_equal(sparse_hist_count(&r->h[STAT_FIG_WALL]), 1);
	assert_int_equal(sparse_hist_max(&r->h[STAT_FIG_WALL]),
			 hist_bucket_value(loglinear_index(50000)));
	stmt_table_free(&d);
	/* against an empty table: everything */
	struct stmt_table none = { 0 };
	assert_int_equal(stmt_table_delta(&t2, &none, &d), 0);
	assert_int_equal(d.n, 2);
	stmt_table_free(&d);
	stmt_table_free(&t1);
	stmt_table_free(&t2);
	snap_free(&s1);
	snap_free(&s2);
}

/* Calls where a counter was multiplexed out are not counted as zeros. */
static void test_unscaled_calls(void **state)
{
	struct stmt_row r = { 0 };
	struct stmt_fig f;

	r.agg.calls = 10;
	r.agg.unscaled[2] = 4;
	r.agg.sum[2] = 600;
	stmt_row_fig(&r, 2, 2, &f);
	assert_true(f.ok);
	assert_int_equal(f.n, 6);
	assert_true(f.mean == 100.0);
	r.agg.unscaled[2] = 10;
	stmt_row_fig(&r, 2, 2, &f);
	assert_false(f.ok);
}

/* 4,096 statements: the table finds each by its text. */
static void test_many(void **state)
{
	struct stmt_table t = { 0 };
	char text[64];

	for (int i = 0; i < 4096; i++) {
		snprintf(text, sizeof(text), "select $1 as c%d", i);
		struct stmt_row *r = stmt_table_get(&t, text);
		assert_non_null(r);
		r->agg.calls = i;
	}
	assert_int_equal(t.n, 4096);
	for (int i = 0; i < 4096; i++) {
		snprintf(text, sizeof(text), "select $1 as c%d", i);
		const struct stmt_row *r = stmt_table_find(&t, text);
		assert_non_null(r);
		assert_int_equal(r->agg.calls, i);
	}
	stmt_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalized_merge),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_unscaled_calls),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
