/* An open-addressing hash table from 64-bit keys to 64-bit values, and a string pool that interns names. */
#ifndef DBTAP_UTIL_HASHTAB_H
#define DBTAP_UTIL_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	bool *used;
	size_t cap, n;
};

void u64map_init(struct u64map *m);
void u64map_free(struct u64map *m);
/* Pointer to the value of key, or NULL. */
uint64_t *u64map_get(const struct u64map *m, uint64_t key);
/* Sets key to val (adds or replaces); -1 when out of memory. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);

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
