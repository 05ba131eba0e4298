/* Unit tests for cmd/cmd.c: the -i/-d, --by and --top parsers the commands share. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd/cmd.h"

static void test_time_opt(void **state)
{
	struct time_opts t = { 0 };

	assert_int_equal(time_opt(&t, 'i', "0.5"), 1);
	assert_true(t.interval == 0.5);
	assert_int_equal(time_opt(&t, 'd', "10"), 1);
	assert_true(t.duration == 10.0);
	assert_int_equal(time_opt(&t, 'i', "0"), 1); /* final report only */
	assert_true(t.interval == 0.0);
	assert_int_equal(time_opt(&t, 'x', "1"), 0); /* not a time option: untouched */
	assert_true(t.duration == 10.0);
	assert_int_equal(time_opt(&t, 'd', "0.01"), 1); /* the shortest */
	assert_true(t.duration == 0.01);
	assert_int_equal(time_opt(&t, 'i', "0.01"), 1);
	assert_true(t.interval == 0.01);
}

static void test_time_opt_bad(void **state)
{
	struct time_opts t = { .interval = 1, .duration = 2 };
	const char *bad[] = { "0", "-1", "x", "1s", "", "1e9", "nan", "NAN", "inf", "-inf",
			      "1e-9", "0.009", "1e-400" };
	const char *bad_i[] = { "-0.1", "soon", "nan", "inf", "1e-9", "0.001", "1e300" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(time_opt(&t, 'd', bad[i]), -1);
	for (size_t i = 0; i < sizeof(bad_i) / sizeof(bad_i[0]); i++)
		assert_int_equal(time_opt(&t, 'i', bad_i[i]), -1);
	assert_true(t.interval == 1 && t.duration == 2); /* a bad value changes nothing */
}

static void test_by_opt(void **state)
{
	enum by by = BY_NONE;

	unsigned all = BY_PID | BY_TYPE | BY_DATABASE | BY_USER;

	assert_int_equal(by_opt(&by, "pid", all), 0);
	assert_int_equal(by, BY_PID);
	assert_int_equal(by_opt(&by, "type", all), 0);
	assert_int_equal(by, BY_TYPE);
	assert_int_equal(by_opt(&by, "database", all), 0);
	assert_int_equal(by, BY_DATABASE);
	assert_int_equal(by_opt(&by, "user", all), 0);
	assert_int_equal(by, BY_USER);
	assert_int_equal(by_opt(&by, "PID", all), -1);
	assert_int_equal(by_opt(&by, "", all), -1);
	/* a key the command does not take is refused like a misspelt one */
	assert_int_equal(by_opt(&by, "query", all), -1);
	assert_int_equal(by_opt(&by, "database", BY_PID | BY_TYPE), -1);
	assert_int_equal(by, BY_USER);
	assert_string_equal(by_name(BY_DATABASE), "database");
	assert_string_equal(by_array(BY_PID), "processes");
	assert_string_equal(by_array(BY_QUERY), "statements");
}

static void test_top_opt(void **state)
{
	int top = 10;

	assert_int_equal(top_opt(&top, "5", "rows"), 0);
	assert_int_equal(top, 5);
	const char *bad[] = { "0", "-3", "5x", "", "99999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(top_opt(&top, bad[i], "rows"), -1);
	assert_int_equal(top, 5); /* a bad value changes nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_opt),
		cmocka_unit_test(test_time_opt_bad),
		cmocka_unit_test(test_by_opt),
		cmocka_unit_test(test_top_opt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
