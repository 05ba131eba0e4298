/* Unit tests for report/jsonread.c: reading dbtap's NDJSON back, and refusing bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/jsonread.h"
#include "util/json.h"

static void test_values(void **state)
{
	const char *err = NULL;
	struct jv *v = jv_parse(" {\"a\": 1.5, \"b\": [true, false, null], \"s\": \"x\\ny\\u00e9\\\"\","
				"\"o\": {\"k\": -2e3}, \"e\": {}, \"n\": []} ", &err);

	assert_non_null(v);
	assert_int_equal(v->type, JV_OBJ);
	assert_true(jv_num(jv_get(v, "a"), 0) == 1.5);
	const struct jv *b = jv_get(v, "b");
	assert_int_equal(b->type, JV_ARR);
	assert_int_equal(b->n, 3);
	assert_true(jv_bool(&b->items[0], false));
	assert_false(jv_bool(&b->items[1], true));
	assert_int_equal(b->items[2].type, JV_NULL);
	assert_string_equal(jv_str(jv_get(v, "s"), ""), "x\ny\xc3\xa9\"");
	assert_true(jv_num(jv_get(jv_get(v, "o"), "k"), 0) == -2000);
	assert_int_equal(jv_get(v, "e")->n, 0);
	assert_int_equal(jv_get(v, "n")->n, 0);
	/* defaults for missing keys and wrong types */
	assert_null(jv_get(v, "missing"));
	assert_true(jv_num(jv_get(v, "s"), 7) == 7);
	assert_string_equal(jv_str(jv_get(v, "a"), "dflt"), "dflt");
	assert_true(jv_num(&b->items[2], 3) == 3); /* null is no number */
	jv_free(v);
	/* a lone surrogate is no character: U+FFFD */
	v = jv_parse("\"a\\ud800b\"", &err);
	assert_non_null(v);
	assert_string_equal(v->str, "a\xef\xbf\xbd" "b");
	jv_free(v);
}

static void test_bad(void **state)
{
	const char *bad[] = { "", "{", "{\"a\" 1}", "[1,]", "[1 2]", "\"abc", "tru", "{\"a\":1} x",
			      "{a:1}", "\"\\q\"", "-", "[\"\\u12\"]",
			      /* a surrogate escape cut short: the reader stops at the end */
			      "\"\\ud800\\u", "\"\\ud800\\", "\"\\ud800\\ud" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *err = NULL;
		struct jv *v = jv_parse(bad[i], &err);
		if (v)
			fail_msg("'%s' parsed", bad[i]);
		assert_non_null(err);
	}
}

/* What util/json.c writes, jsonread reads back. */
static void test_roundtrip(void **state)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j);
	json_object_begin(&j, NULL);
	json_str(&j, "query", "select $1 as \"q\"\t-- x");
	json_uint(&j, "calls", 12345678901ull);
	json_double(&j, "mean", 0.25);
	json_double(&j, "nan", NAN);
	json_array_begin(&j, "cpus");
	json_int(&j, NULL, 0);
	json_int(&j, NULL, 3);
	json_array_end(&j);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);

	struct jv *v = jv_parse(buf, NULL);
	assert_non_null(v);
	assert_string_equal(jv_str(jv_get(v, "query"), ""), "select $1 as \"q\"\t-- x");
	assert_true(jv_num(jv_get(v, "calls"), 0) == 12345678901.0);
	assert_true(jv_num(jv_get(v, "mean"), 0) == 0.25);
	assert_int_equal(jv_get(v, "nan")->type, JV_NULL);
	assert_int_equal(jv_get(v, "cpus")->n, 2);
	assert_true(jv_num(&jv_get(v, "cpus")->items[1], 0) == 3);
	jv_free(v);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
