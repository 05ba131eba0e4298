/* Unit tests for pg/normalize.c and pg/probes.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "pg/probes.h"

static void check(const char *in, const char *want)
{
	char buf[512];
	size_t n = pg_normalize_query(in, buf, sizeof(buf));

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void test_literals(void **state)
{
	check("select 1", "select $1");
	check("SELECT * FROM t WHERE id = 42 AND name = 'bob'",
	      "SELECT * FROM t WHERE id = $1 AND name = $2");
	check("select 1.5e3, .25, 3.", "select $1, $2, $3");
	check("select 'it''s', E'a\\'b', x'ff', B'101', N'n', U&'d\\0061t'",
	      "select $1, $2, $3, $4, $5, $6");
	check("select $$secret$$, $tag$a $$ b$tag$", "select $1, $2");
	/* A sign is part of the constant (as PostgreSQL folds it), a minus is not. */
	check("update pgbench_accounts set abalance = abalance + -4021 where aid = 78123;",
	      "update pgbench_accounts set abalance = abalance + $1 where aid = $2;");
	check("select -1, a-1, a - -2.5, (-3), f(x)-4, 'x' - 5 where y > -6",
	      "select $1, a-$2, a - $3, ($4), f(x)-$5, $6 - $7 where y > $8");
}

static void test_kept(void **state)
{
	check("select t1.c2, \"Weird 1\" from t1", "select t1.c2, \"Weird 1\" from t1");
	check("select $1 + 5, $2", "select $1 + $3, $2");
	check("select a::int4[] from x1y", "select a::int4[] from x1y");
	/* a parameter number past int: kept as written, literals numbered far below INT_MAX */
	check("SELECT $99999999999", "SELECT $99999999999");
	check("SELECT $99999999999, 7", "SELECT $99999999999, $1000000001");
	check("select true, null", "select true, null");
}

/*
 * standard_conforming_strings is a setting of each session: a backslash in '..' may
 * end the string early (on) or escape its quote (off). Neither reading may show any
 * byte the other puts in a literal.
 */
static void test_backslash_strings(void **state)
{
	/* off: one string up to the last quote; on: two strings and code between them */
	check("select 'secret\\' password=hunter2 ' as v", "select $1");
	/* on: a Windows path then a column; off: a string to the end */
	check("select 'C:\\tmp\\' as p, 2", "select $1");
	/* both readings agree: nothing lost */
	check("select 'a\\\\' , 'b'", "select $1 , $2");
	check("select E'a\\'b' , 'c' from t", "select $1 , $2 from t");
	check("select E'x\\\\', 'y'", "select $1, $2");
	/* N'..' is a '..' string: the same two readings, the union of their literals */
	check("select N'k\\' , 1 , 'z'", "select $1");
	/* a backslash outside strings changes nothing */
	check("select a \\ b, 'x'", "select a \\ b, $1");
}

static void test_space_comments(void **state)
{
	check("  select\n\t1 -- the answer\n  from  t /* a /* nested */ comment */ ;  ",
	      "select $1 from t ;");
	check("", "");
	check("   ", "");
}

static void test_truncation(void **state)
{
	char buf[8];
	size_t n = pg_normalize_query("select 123, 'abc'", buf, sizeof(buf));

	assert_string_equal(buf, "select ");
	assert_int_equal(n, strlen("select $1, $2"));
	/* Unterminated literal (a truncated query text): one parameter. */
	check("select 'abc", "select $1");
	check("select $$abc", "select $1");
	/* Multi-byte characters are not cut in half. */
	char small[6];
	pg_normalize_query("ab\xc3\xa9\xc3\xa9", small, sizeof(small));
	assert_string_equal(small, "ab\xc3\xa9");
	pg_normalize_query("select 1", NULL, 0);
}

static void test_probes(void **state)
{
	const struct pg_probes *p = pg_probes_for(15);

	assert_non_null(p);
	assert_string_equal(p->provider, "postgresql");
	assert_string_equal(p->txn_start, "transaction__start");
	assert_string_equal(p->query_done, "query__done");
	assert_non_null(pg_probes_for(0));
	assert_non_null(pg_probes_for(18));
	assert_null(pg_probes_for(8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_backslash_strings),
		cmocka_unit_test(test_space_comments),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_probes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
