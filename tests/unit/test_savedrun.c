/* Unit tests for report/savedrun.c: stat's figures written and read back, and the bounds on a saved run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/savedrun.h"
#include "util/error.h"
#include "util/json.h"

/* A summary line as stat -j writes it: one event of each unit, one statement. */
static char *write_run(void)
{
	struct json j;
	struct stmt_fig tc = { .ok = true, .sum = 9007199254740991ull, .mean = 1234.567891,
			       .p50 = 1000, .p99 = 5000, .max = 6000, .n = 3 };
	struct stmt_fig wall = { .ok = true, .sum = 123456789, .mean = 41152263.0,
				 .p50 = 40000001, .p99 = 50000999, .max = 50000999, .n = 3 };
	struct stmt_fig pf = { .ok = true, .sum = 7, .mean = 7 / 3.0, .p50 = 2, .p99 = 3,
			       .max = 3, .n = 3 };
	struct stmt_fig none = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	json_init(&j);
	/* an interval first: only the summary is read */
	json_report_begin(&j, "interval", 0.5);
	json_double(&j, "interval_s", 0.5);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_report_begin(&j, "summary", 2.5);
	json_double(&j, "duration_s", 2.5);
	json_str(&j, "end", "duration");
	json_str(&j, "target", "pid 42");
	json_array_begin(&j, "statements");
	json_object_begin(&j, NULL);
	json_str(&j, "query", "select $1");
	json_uint(&j, "calls", 3);
	json_array_begin(&j, "cpus");
	json_int(&j, NULL, 1);
	json_int(&j, NULL, 70); /* above what the bit set holds: left out, no UB */
	json_array_end(&j);
	json_uint(&j, "multi_cpu_calls", 1);
	json_object_begin(&j, "events");
	savedrun_write_fig(&j, "task-clock", SAVEDRUN_NS, &tc, NULL);
	savedrun_write_fig(&j, "page-faults", SAVEDRUN_COUNT, &pf, NULL);
	savedrun_write_fig(&j, "instructions", SAVEDRUN_COUNT, &none, "not supported on this machine");
	json_object_end(&j);
	savedrun_write_fig(&j, "wall", SAVEDRUN_US, &wall, NULL);
	json_object_end(&j);
	json_array_end(&j);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);
	return text;
}

static int parse(struct savedrun *sr, const char *text, enum savedrun_kind want)
{
	char *copy = strdup(text);
	int ret;

	assert_non_null(copy);
	ret = savedrun_parse(sr, "t.json", copy, strlen(copy), want);
	free(copy);
	return ret;
}

static void test_roundtrip(void **state)
{
	char *text = write_run();
	struct savedrun sr;
	struct savedrun_row r;
	struct stmt_fig s;
	const char *why;

	(void)state;
	assert_int_equal(parse(&sr, text, SAVEDRUN_QUERY), 0);
	assert_int_equal(sr.kind, SAVEDRUN_QUERY);
	assert_true(sr.duration_s == 2.5);
	assert_string_equal(sr.target, "pid 42");
	assert_int_equal(savedrun_nrows(&sr), 1);
	savedrun_row(&sr, 0, &r);
	assert_string_equal(r.text, "select $1");
	assert_int_equal(r.calls, 3);
	assert_int_equal(r.multi_cpu, 1);
	assert_int_equal(r.cpus, 1u << 1);
	/* integers in full (2^53 - 1 is exact in a double), the mean to its last digit */
	savedrun_row_fig(&r, "task-clock", true, SAVEDRUN_NS, &s, &why);
	assert_true(s.ok);
	assert_int_equal(s.sum, 9007199254740991ull);
	assert_true(s.mean == 1234.567891);
	assert_int_equal(s.p50, 1000);
	assert_int_equal(s.p99, 5000);
	assert_int_equal(s.max, 6000);
	assert_int_equal(s.n, 3);
	/* wall time travels in microseconds and comes back as the same nanoseconds */
	assert_non_null(strstr(text, "\"total_us\":123456.789"));
	savedrun_row_fig(&r, "wall", false, SAVEDRUN_US, &s, &why);
	assert_true(s.ok);
	assert_int_equal(s.sum, 123456789);
	assert_int_equal(s.p50, 40000001);
	assert_int_equal(s.max, 50000999);
	assert_true(fabs(s.mean - 41152263.0) < 1e-6);
	savedrun_row_fig(&r, "page-faults", true, SAVEDRUN_COUNT, &s, &why);
	assert_true(s.ok && s.sum == 7 && s.mean == 7 / 3.0 && s.p99 == 3);
	savedrun_row_fig(&r, "instructions", true, SAVEDRUN_COUNT, &s, &why);
	assert_false(s.ok);
	assert_string_equal(why, "not supported on this machine");
	savedrun_row_fig(&r, "cycles", true, SAVEDRUN_COUNT, &s, &why);
	assert_false(s.ok);
	assert_string_equal(why, "not in the saved run");
	savedrun_free(&sr);
	/* the same file is no counting run */
	assert_int_equal(parse(&sr, text, SAVEDRUN_COUNTING), EXIT_USAGE);
	assert_null(sr.summary);
	free(text);
}

static void test_counting(void **state)
{
	struct json j;
	struct savedrun_count tc = { .counted = true, .value = 5e9, .pct = 50 };
	struct savedrun_count pf = { .counted = true, .value = 300, .pct = 100 };
	struct savedrun_count in = { .reason = "not supported on this machine" };
	struct savedrun sr;
	struct savedrun_count v;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	json_init(&j);
	json_report_begin(&j, "summary", 2);
	json_double(&j, "duration_s", 2);
	json_str(&j, "end", "interrupted");
	json_object_begin(&j, "events");
	savedrun_write_count(&j, "task-clock", true, &tc, 2);
	savedrun_write_count(&j, "page-faults", false, &pf, 2);
	savedrun_write_count(&j, "instructions", false, &in, 2);
	json_object_end(&j);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);
	/* a clock's count carries its unit; a count its rate */
	assert_non_null(strstr(text, "\"task-clock\":{\"counted\":true,\"value_ns\":5000000000,"
				     "\"running_pct\":50}"));
	assert_non_null(strstr(text, "\"value\":300,\"per_s\":150,"));
	assert_int_equal(parse(&sr, text, SAVEDRUN_COUNTING), 0);
	assert_string_equal(sr.target, "?");
	savedrun_count(&sr, "task-clock", true, &v);
	assert_true(v.counted && v.value == 5e9 && v.pct == 50);
	savedrun_count(&sr, "page-faults", false, &v);
	assert_true(v.counted && v.value == 300 && v.pct == 100);
	savedrun_count(&sr, "instructions", false, &v);
	assert_false(v.counted);
	assert_string_equal(v.reason, "not supported on this machine");
	savedrun_count(&sr, "cpu-clock", true, &v);
	assert_false(v.counted);
	assert_string_equal(v.reason, "not in the saved run");
	savedrun_free(&sr);
	assert_int_equal(parse(&sr, text, SAVEDRUN_TRANSACTION), EXIT_USAGE);
	free(text);
}

/* Each of these is refused with EXIT_USAGE, nothing kept. */
static void test_bounds(void **state)
{
#define SUM "{\"report\":\"summary\",\"time_s\":1,"
#define EV(x) "\"events\":{\"page-faults\":" x "}}"
	static const struct {
		enum savedrun_kind want;
		const char *text;
	} bad[] = {
		{ SAVEDRUN_COUNTING, "" },
		{ SAVEDRUN_COUNTING, "not json\n" },
		{ SAVEDRUN_COUNTING, "{\"report\":\"interval\"}\n" },
		{ SAVEDRUN_COUNTING, "{\"report\":\"total\",\"seconds\":1,\"events\":{}}\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1}\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":0," EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":-1," EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1e10," EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":\"1\"," EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1,\"target\":5," EV("{}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1,\"events\":[]}\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("7") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"counted\":1}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"value\":-5}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"value\":\"5\"}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"value_ns\":1e301}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"running_pct\":150}") "\n" },
		{ SAVEDRUN_COUNTING, SUM "\"duration_s\":1," EV("{\"reason\":3}") "\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[7]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"calls\":1}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":1,\"calls\":1}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\"}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":-1}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"cpus\":[1.5]}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"cpus\":[-1]}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"cpus\":[70000]}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"cpus\":{}}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"wall\":{\"total_us\":-1}}]}\n" },
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\",\"calls\":1,"
				  "\"events\":{\"task-clock\":{\"mean_ns\":\"x\"}}}]}\n" },
		/* an outcome row is no statement */
		{ SAVEDRUN_QUERY, SUM "\"duration_s\":1,\"transactions\":[{\"outcome\":\"commit\","
				  "\"calls\":1}]}\n" },
		{ SAVEDRUN_TRANSACTION, SUM "\"duration_s\":1,\"transactions\":[{\"query\":\"commit\","
					"\"calls\":1}]}\n" },
	};
	struct savedrun sr;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(&sr, bad[i].text, bad[i].want) != EXIT_USAGE)
			fail_msg("accepted: %s", bad[i].text);
		assert_null(sr.summary);
	}
	/* the bounds themselves are accepted; the last summary is the one read */
	assert_int_equal(parse(&sr, SUM "\"duration_s\":5," EV("{}") "\n\n"
				    SUM "\"duration_s\":1e9," EV("{\"counted\":true,\"value\":1e300,"
				    "\"running_pct\":100}") "\n", SAVEDRUN_COUNTING), 0);
	assert_true(sr.duration_s == 1e9);
	savedrun_free(&sr);
	/* a huge count saturates instead of overflowing */
	assert_int_equal(parse(&sr, SUM "\"duration_s\":1,\"statements\":[{\"query\":\"q\","
				    "\"calls\":1e300,\"cpus\":[0,63,64]}]}", SAVEDRUN_QUERY), 0);
	struct savedrun_row r;
	savedrun_row(&sr, 0, &r);
	assert_true(r.calls == UINT64_MAX);
	assert_true(r.cpus == (1ull | 1ull << 63));
	savedrun_free(&sr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_counting),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
