/* Unit tests for util/error.c: a thread's messages held by error_capture_begin(), others' not. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static void test_held_in_order(void **state)
{
	char *s;

	error_capture_begin();
	assert_ptr_not_equal(error_stream(), stderr);
	errno = 2;
	error_errno("cannot open '%s'", "x");
	hint("check %d", 1);
	warning("w");
	verbose_on = true;
	verbose("v");
	verbose_on = false;
	verbose("not shown");
	s = error_capture_end();
	assert_ptr_equal(error_stream(), stderr);
	assert_non_null(s);
	assert_string_equal(s, "error: cannot open 'x': No such file or directory\n"
			       "hint: check 1\nwarning: w\ndbtap: v\n");
	free(s);
}

static void test_nothing_said(void **state)
{
	char *s;

	error_capture_begin();
	s = error_capture_end();
	/* an empty buffer or none: either prints nothing */
	assert_true(s == NULL || s[0] == '\0');
	free(s);
	assert_null(error_capture_end()); /* not capturing: nothing held */
}

static void *other_thread(void *arg)
{
	*(FILE **)arg = error_stream();
	return NULL;
}

static void test_per_thread(void **state)
{
	pthread_t th;
	FILE *seen = NULL;
	char *s;

	error_capture_begin();
	assert_int_equal(pthread_create(&th, NULL, other_thread, &seen), 0);
	pthread_join(th, NULL);
	assert_ptr_equal(seen, stderr); /* another thread still writes to stderr */
	s = error_capture_end();
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_in_order),
		cmocka_unit_test(test_nothing_said),
		cmocka_unit_test(test_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
