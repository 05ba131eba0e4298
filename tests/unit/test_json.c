/* Unit tests for util/json.c: numbers keep their precision, nesting is never clamped. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

/* The line one json_double call makes, inside {"v": ...}. */
static char *line_of(double v)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j);
	json_object_begin(&j, NULL);
	json_double(&j, "v", v);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);
	return buf;
}

static void expect_double(double v, const char *text)
{
	char want[64], *got = line_of(v);

	snprintf(want, sizeof(want), "{\"v\":%s}\n", text);
	assert_string_equal(got, want);
	free(got);
}

static void test_double_precision(void **state)
{
	/* %.6g made these 1234.57 and 1.23457e+06 */
	expect_double(1234.567891, "1234.567891");
	expect_double(1234567.8, "1234567.8");
	expect_double(0.1, "0.1");
	expect_double(0.5, "0.5");
	expect_double(3, "3");
	expect_double(-2.25, "-2.25");
	expect_double(0.1 + 0.2, "0.30000000000000004"); /* 17 digits when 15 do not read back */
	expect_double(1e21, "1e+21");
	expect_double(NAN, "null");
	expect_double(INFINITY, "null");
}

static void test_double_round_trip(void **state)
{
	char buf[40];
	double v = 1.0;

	/* every printed value reads back as the same double */
	for (int i = 0; i < 2000; i++) {
		v = v * 1.37 + 1e-7 * i;
		if (v > 1e300)
			v = 1e-300 * i;
		json_format_double(buf, sizeof(buf), v);
		assert_true(strtod(buf, NULL) == v);
	}
}

static void test_deep_nesting(void **state)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const int depth = 3 * JSON_INLINE_DEPTH;

	json_init(&j);
	json_object_begin(&j, NULL);
	for (int i = 0; i < depth; i++) {
		json_array_begin(&j, i ? NULL : "a");
		json_int(&j, NULL, i);
	}
	for (int i = 0; i < depth; i++) {
		json_int(&j, NULL, -i);
		json_array_end(&j);
	}
	json_int(&j, "after", 1);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);

	/* rebuild the expected text: every level keeps its own commas */
	char *want = calloc(1, 64 * depth + 64), *p = want;
	p += sprintf(p, "{\"a\":");
	for (int i = 0; i < depth; i++)
		p += sprintf(p, "%s[%d", i ? "," : "", i);
	for (int i = 0; i < depth; i++)
		p += sprintf(p, ",%d]", -i);
	sprintf(p, ",\"after\":1}\n");
	assert_string_equal(buf, want);
	free(want);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_double_precision),
		cmocka_unit_test(test_double_round_trip),
		cmocka_unit_test(test_deep_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
