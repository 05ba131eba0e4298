/* Unit tests for util/hashmap.c: against a plain array as the model, growth, deletion. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/hashtab.h"

static void test_empty(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	uint64_t v = 7;
	size_t pos = 0;

	assert_false(hashmap_get_u64(&m, 1, &v));
	assert_int_equal(v, 7);
	assert_false(hashmap_del_u64(&m, 1));
	assert_false(hashmap_next(&m, &pos, NULL, NULL, NULL));
	assert_int_equal(hashmap_count(&m), 0);
	hashmap_free(&m);
}

static void test_put_get_replace(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	uint64_t v;

	assert_int_equal(hashmap_put_str(&m, "select $1", 1), 0);
	assert_int_equal(hashmap_put_str(&m, "select $1 as x", 2), 0);
	assert_true(hashmap_get_str(&m, "select $1", &v));
	assert_int_equal(v, 1);
	assert_true(hashmap_get_str(&m, "select $1 as x", &v));
	assert_int_equal(v, 2);
	assert_false(hashmap_get_str(&m, "select $2", &v));
	/* a prefix is another key */
	assert_false(hashmap_get(&m, "select", 6, &v));
	assert_int_equal(hashmap_put_str(&m, "select $1", 10), 0);
	assert_int_equal(hashmap_count(&m), 2);
	assert_true(hashmap_get_str(&m, "select $1", &v));
	assert_int_equal(v, 10);
	/* the empty key is a key */
	assert_int_equal(hashmap_put(&m, "", 0, 99), 0);
	assert_true(hashmap_get(&m, "", 0, &v));
	assert_int_equal(v, 99);
	hashmap_free(&m);
	assert_int_equal(hashmap_count(&m), 0);
}

/* The map owns its keys: the caller's buffer may change or go. */
static void test_keys_copied(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	char buf[64];
	uint64_t v;

	strcpy(buf, "a key longer than the sixteen bytes held in the slot");
	assert_int_equal(hashmap_put_str(&m, buf, 5), 0);
	strcpy(buf, "short");
	assert_int_equal(hashmap_put_str(&m, buf, 6), 0);
	memset(buf, 'x', sizeof(buf) - 1);
	assert_true(hashmap_get_str(&m, "a key longer than the sixteen bytes held in the slot", &v));
	assert_int_equal(v, 5);
	assert_true(hashmap_get_str(&m, "short", &v));
	assert_int_equal(v, 6);
	hashmap_free(&m);
}

/*
 * Random puts, gets and deletes against an array of presence flags: many growths,
 * long probe runs and wrap-around deletions on the way.
 */
static void test_against_model(void **state)
{
	enum { N = 5000, OPS = 200000 };
	struct hashmap m = HASHMAP_INIT;
	static uint64_t model[N];
	static bool present[N];
	size_t count = 0;
	unsigned seed = 12345;

	for (int op = 0; op < OPS; op++) {
		seed = seed * 1103515245 + 12345;
		uint64_t k = (seed >> 8) % N;
		int what = (seed >> 24) % 3;
		uint64_t v;
		if (what == 0) {
			assert_int_equal(hashmap_put_u64(&m, k, op), 0);
			count += !present[k];
			present[k] = true;
			model[k] = op;
		} else if (what == 1) {
			assert_int_equal(hashmap_del_u64(&m, k), present[k]);
			count -= present[k];
			present[k] = false;
		} else {
			bool got = hashmap_get_u64(&m, k, &v);
			assert_int_equal(got, present[k]);
			if (got)
				assert_int_equal(v, model[k]);
		}
		assert_int_equal(hashmap_count(&m), count);
	}
	for (uint64_t k = 0; k < N; k++) {
		uint64_t v;
		assert_int_equal(hashmap_get_u64(&m, k, &v), present[k]);
		if (present[k])
			assert_int_equal(v, model[k]);
	}
	/* iteration visits each entry once */
	size_t pos = 0, seen = 0, klen;
	const void *key;
	uint64_t v;
	static bool visited[N];
	while (hashmap_next(&m, &pos, &key, &klen, &v)) {
		uint64_t k;
		assert_int_equal(klen, sizeof(k));
		memcpy(&k, key, sizeof(k));
		assert_true(k < N && present[k] && !visited[k]);
		assert_int_equal(v, model[k]);
		visited[k] = true;
		seen++;
	}
	assert_int_equal(seen, count);
	hashmap_free(&m);
}

/* Deleting everything in insertion order and in reverse leaves an empty, usable map. */
/* Counting in place through hashmap_ref, and the u64map view of the same table. */
static void test_ref_and_u64map(void **state)
{
	struct u64map m;
	uint64_t k, v, sum = 0;
	size_t pos = 0, seen = 0;

	u64map_init(&m);
	assert_null(u64map_get(&m, 5));
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t *p = u64map_get(&m, i % 100);
		if (p)
			(*p)++;
		else
			assert_int_equal(u64map_put(&m, i % 100, 1), 0);
	}
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(*u64map_get(&m, i), 10);
	while (u64map_next(&m, &pos, &k, &v)) {
		assert_true(k < 100);
		sum += v;
		seen++;
	}
	assert_int_equal(seen, 100);
	assert_int_equal(sum, 1000);
	assert_null(hashmap_ref(&m.m, "absent", 6));
	u64map_free(&m);
}

static void test_delete_all(void **state)
{
	struct hashmap m = HASHMAP_INIT;
	char key[32];

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 1000; i++) {
			snprintf(key, sizeof(key), "statement number %d", i);
			assert_int_equal(hashmap_put_str(&m, key, i), 0);
		}
		for (int j = 0; j < 1000; j++) {
			int i = round ? 999 - j : j;
			snprintf(key, sizeof(key), "statement number %d", i);
			assert_true(hashmap_del(&m, key, strlen(key)));
			assert_false(hashmap_get_str(&m, key, NULL));
		}
		assert_int_equal(hashmap_count(&m), 0);
	}
	hashmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_get_replace),
		cmocka_unit_test(test_keys_copied),
		cmocka_unit_test(test_against_model),
		cmocka_unit_test(test_ref_and_u64map),
		cmocka_unit_test(test_delete_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
