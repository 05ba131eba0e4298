/* One hash table for user space: byte-string keys (copied in), a 64-bit value each. */
#ifndef DBTAP_UTIL_HASHMAP_H
#define DBTAP_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Open addressing with linear probing and backward-shift deletion (no tombstones), kept
 * at most 70 % full. The map owns a copy of every key (16 bytes or less are held in the
 * slot itself, so pid and u64 keys never allocate); the value is a plain 64-bit number,
 * usually an index into the caller's array, which stays valid when that array grows.
 * libbpf has a hashmap of its own, but it is internal to libbpf (not in its public
 * headers nor its ABI), so dbtap cannot use it.
 */
#define HASHMAP_INLINE_KEY 16

struct hashmap_slot {
	uint64_t hash;   /* 0: the slot is free (real hashes are made non-zero) */
	uint64_t value;
	uint32_t klen;
	union {
		unsigned char inl[HASHMAP_INLINE_KEY];
		unsigned char *ptr;
	} key;
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t cap;   /* 0 or a power of two */
	size_t n;
};

#define HASHMAP_INIT { NULL, 0, 0 }

void hashmap_init(struct hashmap *m);
/* Frees the slots and the key copies; the map is empty and usable again. */
void hashmap_free(struct hashmap *m);

/* Inserts key or replaces its value. 0, or -1 when out of memory (the map unchanged). */
int hashmap_put(struct hashmap *m, const void *key, size_t klen, uint64_t value);
/* true and *value (may be NULL) when key is there. */
bool hashmap_get(const struct hashmap *m, const void *key, size_t klen, uint64_t *value);
/*
 * The value of key in place, for counting without a second lookup; NULL when key is
 * not there. The pointer holds until the map next gains or loses a key.
 */
uint64_t *hashmap_ref(const struct hashmap *m, const void *key, size_t klen);
/* Removes key; true when it was there. */
bool hashmap_del(struct hashmap *m, const void *key, size_t klen);

static inline size_t hashmap_count(const struct hashmap *m)
{
	return m->n;
}

/*
 * Iteration in slot order: size_t pos = 0; while (hashmap_next(m, &pos, &k, &kl, &v)).
 * The map must not change during it. k, kl and v may be NULL.
 */
bool hashmap_next(const struct hashmap *m, size_t *pos, const void **key, size_t *klen,
		  uint64_t *value);

/* String keys (without their NUL) and 64-bit integer keys. */
static inline int hashmap_put_str(struct hashmap *m, const char *s, uint64_t value)
{
	return hashmap_put(m, s, strlen(s), value);
}
static inline bool hashmap_get_str(const struct hashmap *m, const char *s, uint64_t *value)
{
	return hashmap_get(m, s, strlen(s), value);
}
static inline int hashmap_put_u64(struct hashmap *m, uint64_t k, uint64_t value)
{
	return hashmap_put(m, &k, sizeof(k), value);
}
static inline bool hashmap_get_u64(const struct hashmap *m, uint64_t k, uint64_t *value)
{
	return hashmap_get(m, &k, sizeof(k), value);
}
static inline bool hashmap_del_u64(struct hashmap *m, uint64_t k)
{
	return hashmap_del(m, &k, sizeof(k));
}

#endif
