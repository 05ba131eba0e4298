/* Unit tests for report/hist.c and bpf/loglinear.h: buckets, percentiles, display slots. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"

static void test_log2(void **state)
{
	assert_int_equal(ll_log2(1), 0);
	assert_int_equal(ll_log2(2), 1);
	assert_int_equal(ll_log2(3), 1);
	assert_int_equal(ll_log2(1023), 9);
	assert_int_equal(ll_log2(1024), 10);
	assert_int_equal(ll_log2(UINT64_MAX), 63);
	for (int e = 0; e < 64; e++) {
		assert_int_equal(ll_log2(1ull << e), e);
		if (e > 0)
			assert_int_equal(ll_log2((1ull << e) - 1), e - 1);
	}
}

/* Every value lies in [lower, lower + width) of its bucket, buckets are contiguous. */
static void test_loglinear_bounds(void **state)
{
	uint64_t probes[] = { 0, 1, 31, 32, 33, 63, 64, 65, 100, 1000, 50000000, 123456789,
			      1ull << 40, (1ull << 40) + 12345, UINT64_MAX };

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t v = probes[i];
		uint32_t idx = loglinear_index(v);

		assert_true(idx < LL_BUCKETS);
		assert_true(loglinear_lower(idx) <= v);
		assert_true(v - loglinear_lower(idx) < loglinear_width(idx));
	}
	assert_int_equal(loglinear_index(UINT64_MAX), LL_BUCKETS - 1);
	for (uint32_t idx = 0; idx + 1 < LL_BUCKETS; idx++)
		assert_true(loglinear_lower(idx) + loglinear_width(idx) == loglinear_lower(idx + 1));
	/* Small values are exact. */
	for (uint64_t v = 0; v < 64; v++)
		assert_int_equal(loglinear_index(v), v);
}

/* The documented bound: a bucket's midpoint is within 1/64 of any value in it. */
static void test_relative_error(void **state)
{
	uint64_t v = 1;

	while (v < (1ull << 62)) {
		struct hist h;
		uint64_t p;
		double err;

		hist_reset(&h);
		hist_add(&h, v, 1);
		p = hist_percentile(&h, 50);
		err = (double)(p > v ? p - v : v - p) / (double)v;
		assert_true(err <= HIST_REL_ERROR);
		v = v * 3 / 2 + 7;
	}
}

/* 1..1000 once each: nearest-rank p50 = 500, p90 = 900, p99 = 990, max = 1000. */
static void test_percentiles(void **state)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct hist_summary s;

	for (uint64_t v = 1; v <= 1000; v++)
		hist_add(h, v, 1);
	hist_summarize(h, &s);
	assert_int_equal(s.count, 1000);
	assert_true(s.mean > 500.49 && s.mean < 500.51);
	assert_true(s.p50 >= 500 * (1 - HIST_REL_ERROR) && s.p50 <= 500 * (1 + HIST_REL_ERROR));
	assert_true(s.p90 >= 900 * (1 - HIST_REL_ERROR) && s.p90 <= 900 * (1 + HIST_REL_ERROR));
	assert_true(s.p99 >= 990 * (1 - HIST_REL_ERROR) && s.p99 <= 990 * (1 + HIST_REL_ERROR));
	assert_true(s.max >= 1000 * (1 - HIST_REL_ERROR) && s.max <= 1000 * (1 + HIST_REL_ERROR));
	assert_int_equal(hist_min(h), 1);

	/* 50 ms transactions with a few outliers: p50 stays at 50 ms within the bound. */
	hist_reset(h);
	hist_add(h, 50000000, 97);
	hist_add(h, 900000000, 3);
	assert_true(hist_percentile(h, 50) >= 50000000 * (1 - HIST_REL_ERROR));
	assert_true(hist_percentile(h, 50) <= 50000000 * (1 + HIST_REL_ERROR));
	assert_true(hist_percentile(h, 99) >= 900000000 * (1 - HIST_REL_ERROR));

	hist_reset(h);
	assert_int_equal(hist_percentile(h, 50), 0);
	assert_int_equal(hist_max(h), 0);
	free(h);
}

static void test_delta_merge(void **state)
{
	struct hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *d = calloc(1, sizeof(*d));

	hist_add(a, 100, 5);
	*b = *a;
	hist_add(b, 100, 2);
	hist_add(b, 7, 1);
	hist_delta(d, b, a);
	assert_int_equal(d->count, 3);
	assert_int_equal(d->sum, 207);
	assert_int_equal(d->counts[loglinear_index(100)], 2);
	assert_int_equal(d->counts[7], 1);
	hist_merge(d, a);
	assert_int_equal(d->count, 8);
	hist_recount(d);
	assert_int_equal(d->count, 8);
	free(a);
	free(b);
	free(d);
}

static void test_spec_parse(void **state)
{
	struct hist_spec s;

	assert_int_equal(hist_spec_parse("log2", &s), 0);
	assert_int_equal(s.kind, DISP_LOG2);
	assert_int_equal(hist_spec_slots(&s), 65);
	assert_int_equal(hist_spec_parse("linear:0:1000:50", &s), 0);
	assert_int_equal(s.kind, DISP_LINEAR);
	assert_int_equal(s.n, 21);
	assert_int_equal(hist_spec_slots(&s), 23);
	assert_int_equal(hist_spec_parse("linear:0:1000", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:1000:0", &s), -1);
	assert_int_equal(hist_spec_parse("linear:10:5:1", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:100000:1", &s), -1);
	assert_int_equal(hist_spec_parse("linear:a:b:c", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:10:1:5", &s), -1);
	assert_int_equal(hist_spec_parse("log3", &s), -1);
	/* empty fields are fields: not dropped */
	assert_int_equal(hist_spec_parse("linear::0:10:1", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:10:1:", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0::10", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:10:", &s), -1);
	assert_int_equal(hist_spec_parse("linear:", &s), -1);
	assert_int_equal(hist_spec_parse("linear: 0:10:1", &s), -1);
	assert_int_equal(hist_spec_parse("linear:+0:10:1", &s), -1);
	/* the bucket count would wrap to 0; edges past the bound would wrap */
	assert_int_equal(hist_spec_parse("linear:0:18446744073709551615:1", &s), -1);
	assert_int_equal(hist_spec_parse("linear:18446744073709551000:18446744073709551615:100", &s), -1);
	assert_int_equal(hist_spec_parse("linear:0:1000000000000:100000000000", &s), 0);
	assert_int_equal(s.n, 11);
	assert_int_equal(hist_spec_parse("linear:0:1000000000001:100000000000", &s), -1);
}

static void test_slots(void **state)
{
	struct hist_spec s;

	hist_spec_parse("linear:0:1000:50", &s);
	assert_int_equal(hist_spec_slot(&s, 0), 1);
	assert_int_equal(hist_spec_slot(&s, 49), 1);
	assert_int_equal(hist_spec_slot(&s, 50), 2);
	assert_int_equal(hist_spec_slot(&s, 1000), 21);
	assert_int_equal(hist_spec_slot(&s, 1049), 21);
	assert_int_equal(hist_spec_slot(&s, 1050), 22);
	assert_int_equal(hist_spec_slot(&s, 99999), 22);
	hist_spec_parse("linear:100:200:10", &s);
	assert_int_equal(hist_spec_slot(&s, 99), 0);

	hist_spec_parse("log2", &s);
	assert_int_equal(hist_spec_slot(&s, 0), 0);
	assert_int_equal(hist_spec_slot(&s, 1), 1);
	assert_int_equal(hist_spec_slot(&s, 2), 2);
	assert_int_equal(hist_spec_slot(&s, 3), 2);
	assert_int_equal(hist_spec_slot(&s, 4), 3);
	assert_int_equal(hist_spec_slot(&s, 50000), 16);
	assert_int_equal(hist_spec_slot(&s, UINT64_MAX), 64);
}

/* The printed bars: rows, labels and counts as SystemTap's @hist_linear shows them. */
static void test_print_linear(void **state)
{
	struct hist_spec s;
	uint64_t slots[DISP_SLOTS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hist_spec_parse("linear:0:1000:50", &s);
	slots[hist_spec_slot(&s, 120)] = 2384;
	slots[hist_spec_slot(&s, 160)] = 13313;
	slots[hist_spec_slot(&s, 5000)] = 128;
	hist_print(f, &s, slots, "value");
	fclose(f);
	assert_non_null(strstr(buf, " value |-------------------------------------------------- count\n"));
	assert_non_null(strstr(buf, "   100 |@@@@@@@@@                                          2384\n"));
	assert_non_null(strstr(buf, "   150 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 13313\n"));
	assert_non_null(strstr(buf, "   200 |                                                   0\n"));
	assert_non_null(strstr(buf, " >1000 |@                                                  128\n"));
	assert_null(strstr(buf, "    50 |"));
	free(buf);
}

static void test_print_log2(void **state)
{
	struct hist_spec s;
	uint64_t slots[DISP_SLOTS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hist_spec_parse("log2", &s);
	slots[hist_spec_slot(&s, 40)] = 10;
	slots[hist_spec_slot(&s, 3000)] = 5;
	hist_print(f, &s, slots, "us");
	fclose(f);
	assert_non_null(strstr(buf, "[32, 64)                 10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"));
	assert_non_null(strstr(buf, "[2K, 4K)                  5 |@@@@@@@@@@@@@@@@@@@@@@@@@                         |\n"));
	assert_non_null(strstr(buf, "[1K, 2K)                  0 |"));
	free(buf);
}

static void test_json(void **state)
{
	struct hist_spec s;
	uint64_t slots[DISP_SLOTS] = { 0 };
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hist_spec_parse("linear:0:100:10", &s);
	slots[hist_spec_slot(&s, 15)] = 3;
	slots[hist_spec_slot(&s, 500)] = 1;
	json_init(&j);
	json_object_begin(&j, NULL);
	hist_json(&j, "hist", &s, slots, "us");
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);
	assert_string_equal(buf, "{\"hist\":[{\"low_us\":10,\"high_us\":20,\"count\":3},"
				 "{\"low_us\":110,\"high_us\":null,\"count\":1}]}\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2),
		cmocka_unit_test(test_loglinear_bounds),
		cmocka_unit_test(test_relative_error),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_delta_merge),
		cmocka_unit_test(test_spec_parse),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_print_linear),
		cmocka_unit_test(test_print_log2),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
