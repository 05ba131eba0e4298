/*
 * Unit tests for bpf/mapdump.c on real BPF maps (needs root or CAP_BPF; skipped
 * otherwise): the batched read and the get_next_key walk return the same entries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/mapdump.h"

struct key {
	uint32_t probe, pid; /* the shape of count's and tps's keys */
};

/* n entries: key (i, 1000 + i), value 7 * i + 1 (each CPU's: + cpu). */
static int map_make(enum bpf_map_type type, int n, int ncpus)
{
	int fd = bpf_map_create(type, "dbtap_test", sizeof(struct key), sizeof(uint64_t),
				4 * n + 256, NULL); /* room: an LRU map evicts before it is full */
	if (fd < 0)
		return -1;
	uint64_t *v = calloc(ncpus, sizeof(*v));
	for (int i = 0; i < n; i++) {
		struct key k = { i, 1000 + i };
		for (int c = 0; c < ncpus; c++)
			v[c] = 7ull * i + 1 + c;
		assert_int_equal(bpf_map_update_elem(fd, &k, v, BPF_ANY), 0);
	}
	free(v);
	return fd;
}

static void check(int n, int got, const struct key *k, const uint64_t *v, int ncpus)
{
	char *seen = calloc(n ? n : 1, 1);

	assert_int_equal(got, n);
	for (int i = 0; i < got; i++) {
		assert_true(k[i].probe < (uint32_t)n);
		assert_int_equal(k[i].pid, 1000 + k[i].probe);
		assert_false(seen[k[i].probe]);
		seen[k[i].probe] = 1;
		for (int c = 0; c < ncpus; c++)
			assert_int_equal(v[i * ncpus + c], 7ull * k[i].probe + 1 + c);
	}
	free(seen);
}

static void both_ways(enum bpf_map_type type, bool percpu)
{
	int ncpus = percpu ? libbpf_num_possible_cpus() : 1;
	static const int sizes[] = { 0, 1, 255, 256, 257, 3000 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], fd = map_make(type, n, ncpus), got;
		struct key *k;
		uint64_t *v;
		if (fd < 0) {
			if (errno == EPERM || errno == EACCES)
				skip(); /* not root: no BPF maps here */
			fail_msg("bpf_map_create: %s", strerror(errno));
		}
		size_t vs = ncpus * sizeof(uint64_t);
		/* a chunk of 1: hash buckets with several entries make it grow */
		for (unsigned chunk = 1; chunk <= 256; chunk *= 256) {
			got = map_dump_batch(fd, sizeof(*k), vs, (void **)&k, (void **)&v, chunk);
			check(n, got, k, v, ncpus);
			free(k);
			free(v);
		}
		got = map_dump_walk(fd, sizeof(*k), vs, (void **)&k, (void **)&v);
		check(n, got, k, v, ncpus);
		free(k);
		free(v);
		got = map_dump(fd, sizeof(*k), vs, NULL, (void **)&v);
		assert_int_equal(got, n);
		free(v);
		close(fd);
	}
}

static void test_hash(void **state)
{
	both_ways(BPF_MAP_TYPE_HASH, false);
}

static void test_lru_hash(void **state)
{
	both_ways(BPF_MAP_TYPE_LRU_HASH, false);
}

static void test_percpu_hash(void **state)
{
	both_ways(BPF_MAP_TYPE_PERCPU_HASH, true);
}

/* Entries of { key; value; }: each key with its own value, the value at its offset. */
static void test_entries(void **state)
{
	struct entry {
		struct key k;
		uint64_t v;
	} *e = NULL;
	int fd = map_make(BPF_MAP_TYPE_HASH, 300, 1), got;

	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			skip();
		fail_msg("bpf_map_create: %s", strerror(errno));
	}
	got = map_dump_entries(fd, sizeof(struct key), sizeof(uint64_t), sizeof(*e),
			       offsetof(struct entry, v), (void **)&e);
	assert_int_equal(got, 300);
	for (int i = 0; i < got; i++) {
		assert_int_equal(e[i].k.pid, 1000 + e[i].k.probe);
		assert_int_equal(e[i].v, 7ull * e[i].k.probe + 1);
	}
	free(e);
	close(fd);
}

/*
 * A map type without batch lookup (a sockmap, empty: its entries would be sockets):
 * the batch says so, and map_dump falls back on the walk (the walk itself is checked
 * against the batch above, on hash maps).
 */
static void test_fallback(void **state)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_SOCKMAP, "dbtap_test", sizeof(uint32_t),
				sizeof(uint64_t), 4, NULL);
	void *keys = NULL, *v = NULL;

	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			skip();
		fail_msg("bpf_map_create: %s", strerror(errno));
	}
	errno = 0;
	assert_int_equal(map_dump_batch(fd, sizeof(uint32_t), sizeof(uint64_t), &keys, &v, 256), -1);
	assert_true(errno == EINVAL || errno == 524 /* ENOTSUPP */ || errno == EOPNOTSUPP);
	assert_int_equal(map_dump(fd, sizeof(uint32_t), sizeof(uint64_t), &keys, &v), 0);
	free(keys);
	free(v);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_lru_hash),
		cmocka_unit_test(test_percpu_hash),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
