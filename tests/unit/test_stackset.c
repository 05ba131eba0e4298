/* Unit tests for report/stackset.c and report/folded.c: merging, name cleaning, folded output. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/folded.h"
#include "report/stackset.h"

static void test_merge_and_fold(void **state)
{
	struct stack_set ss;
	char *out = NULL;
	size_t len = 0;

	stack_set_init(&ss);
	uint32_t g = stack_set_frame(&ss, "app", STACK_GROUP);
	uint32_t m = stack_set_frame(&ss, "main", STACK_USER);
	uint32_t a = stack_set_frame(&ss, "f_a", STACK_USER);
	uint32_t b = stack_set_frame(&ss, "f_b", STACK_USER);
	uint32_t s1[] = { g, m, a }, s2[] = { g, m, b }, s3[] = { g, m };
	assert_int_equal(stack_set_add(&ss, s1, 3, 5), 0);
	assert_int_equal(stack_set_add(&ss, s2, 3, 2), 0);
	assert_int_equal(stack_set_add(&ss, s1, 3, 1), 0);
	assert_int_equal(stack_set_add(&ss, s3, 2, 1), 0);
	assert_int_equal(ss.n, 3);
	assert_int_equal(ss.total, 9);
	assert_int_equal(stack_set_frame(&ss, "main", STACK_KERNEL), m);
	assert_int_equal(ss.kinds[m], STACK_USER);

	FILE *f = open_memstream(&out, &len);
	assert_int_equal(folded_write(&ss, f), 0);
	fclose(f);
	assert_string_equal(out, "app;main 1\napp;main;f_a 6\napp;main;f_b 2\n");
	free(out);
	stack_set_free(&ss);
}

static void test_clean_names(void **state)
{
	struct stack_set ss;

	stack_set_init(&ss);
	uint32_t id = stack_set_frame(&ss, "a;b\nc\xff" "d\xc3\xa9", STACK_JIT);
	assert_string_equal(stack_set_name(&ss, id), "a:b?c?d\xc3\xa9");
	id = stack_set_frame(&ss, "", STACK_USER);
	assert_string_equal(stack_set_name(&ss, id), "?");
	/* an overlong encoding and a lone surrogate are not UTF-8 */
	id = stack_set_frame(&ss, "\xc0\xaf" "x\xed\xa0\x80", STACK_USER);
	assert_string_equal(stack_set_name(&ss, id), "??x???");
	stack_set_free(&ss);
}

static void test_many(void **state)
{
	struct stack_set ss;
	char name[32];

	stack_set_init(&ss);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn%d", i % 5000);
		uint32_t fr[2] = { stack_set_frame(&ss, "g", STACK_GROUP), stack_set_frame(&ss, name, STACK_USER) };
		assert_int_equal(stack_set_add(&ss, fr, 2, 1), 0);
	}
	assert_int_equal(ss.n, 5000);
	assert_int_equal(ss.total, 20000);
	for (size_t i = 0; i < ss.n; i++)
		assert_int_equal(ss.v[i].count, 4);
	stack_set_free(&ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_and_fold),
		cmocka_unit_test(test_clean_names),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
