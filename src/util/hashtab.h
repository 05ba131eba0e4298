/* u64 -> u64 maps on the one hash table, a string pool that interns names, and the hash function they share. */
#ifndef DBTAP_UTIL_HASHTAB_H
#define DBTAP_UTIL_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/hashmap.h"

/*
 * u64 keys to u64 values: a view of the one hash table, util/hashmap.h, for the symbol
 * caches and frame tables that count in place through the pointer u64map_get returns.
 */
struct u64map {
	struct hashmap m;
};

static inline void u64map_init(struct u64map *m)
{
	hashmap_init(&m->m);
}

static inline void u64map_free(struct u64map *m)
{
	hashmap_free(&m->m);
}

/* Pointer to the value of key (valid until the next put of a new key), or NULL. */
static inline uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
	return hashmap_ref(&m->m, &key, sizeof(key));
}

/* Sets key to val (adds or replaces); -1 when out of memory. */
static inline int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	return hashmap_put_u64(&m->m, key, val);
}

/* Iteration: size_t pos = 0; while (u64map_next(m, &pos, &k, &v)). */
static inline bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	const void *k;

	if (!hashmap_next(&m->m, pos, &k, NULL, val))
		return false;
	memcpy(key, k, sizeof(*key));
	return true;
}

/* Strings kept once each, never moved: an id per distinct string. */
struct strpool {
	char **strs;      /* by id */
	size_t n, cap;
	struct u64map idx; /* hash -> first id with that hash (chains through next) */
	uint32_t *next;   /* by id: the next id with the same hash, or UINT32_MAX */
};

void strpool_init(struct strpool *p);
void strpool_free(struct strpool *p);
/* The id of s, added when new; UINT32_MAX when out of memory. */
uint32_t strpool_intern(struct strpool *p, const char *s);
static inline const char *strpool_str(const struct strpool *p, uint32_t id) { return p->strs[id]; }

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
