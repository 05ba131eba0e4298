/* Unit tests for pg_pidfile_parse: postmaster.pid files as servers write them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "pg/cluster.h"

/* A running 15 cluster's file (unix socket only: empty listen address). */
static void test_running(void **state)
{
	const char *text =
		"48211\n"
		"/var/lib/postgresql/15/main\n"
		"1795999013\n"
		"5432\n"
		"/var/run/postgresql\n"
		"localhost\n"
		"  5432001         3\n"
		"ready   \n";
	struct pg_pidfile pf;

	assert_int_equal(pg_pidfile_parse(text, &pf), 0);
	assert_int_equal(pf.pid, 48211);
	assert_string_equal(pf.datadir, "/var/lib/postgresql/15/main");
	assert_int_equal(pf.start_time, 1795999013);
	assert_int_equal(pf.port, 5432);
	assert_string_equal(pf.socket_dir, "/var/run/postgresql");
	assert_string_equal(pf.listen_addr, "localhost");
	assert_string_equal(pf.shmem_key, "5432001         3");
	assert_string_equal(pf.status, "ready");
}

static void test_states(void **state)
{
	static const char *states[] = { "starting", "stopping", "ready", "standby" };
	struct pg_pidfile pf;
	char text[256];

	for (size_t i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "7\n/d\n1\n5433\n/tmp\n\n  1 2\n%-8s\n", states[i]);
		assert_int_equal(pg_pidfile_parse(text, &pf), 0);
		assert_string_equal(pf.status, states[i]);
		assert_string_equal(pf.listen_addr, "");
		assert_int_equal(pf.port, 5433);
	}
}

/* Older servers and a server still starting write fewer lines. */
static void test_short(void **state)
{
	struct pg_pidfile pf;

	assert_int_equal(pg_pidfile_parse("123\n/data\n", &pf), 0);
	assert_int_equal(pf.pid, 123);
	assert_string_equal(pf.datadir, "/data");
	assert_int_equal(pf.port, 0);
	assert_string_equal(pf.status, "");
	/* No trailing newline. */
	assert_int_equal(pg_pidfile_parse("123\n/data", &pf), 0);
	assert_string_equal(pf.datadir, "/data");
}

/* A standalone backend (postgres --single) writes its pid negated. */
static void test_standalone(void **state)
{
	struct pg_pidfile pf;

	assert_int_equal(pg_pidfile_parse("-4242\n/data\n1\n0\n\n\n\n", &pf), 0);
	assert_int_equal(pf.pid, -4242);
}

static void test_garbage(void **state)
{
	struct pg_pidfile pf;

	assert_int_equal(pg_pidfile_parse("", &pf), -1);
	assert_int_equal(pg_pidfile_parse("abc\n/data\n", &pf), -1);
	assert_int_equal(pg_pidfile_parse("0\n/data\n", &pf), -1);
	assert_int_equal(pg_pidfile_parse("12x\n/data\n", &pf), -1);
	assert_int_equal(pg_pidfile_parse("123\n", &pf), -1);          /* no data dir */
	assert_int_equal(pg_pidfile_parse("123\nrelative\n", &pf), -1); /* not absolute */
	assert_int_equal(pg_pidfile_parse("99999999999\n/d\n", &pf), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_running),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_standalone),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
