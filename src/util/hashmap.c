/* Open-addressing hash table (linear probing, backward-shift deletion) with copied keys. */
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

#define MIN_CAP 16

/* FNV-1a then a 64-bit finalizer (MurmurHash3's fmix64): small integer keys spread too. */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1; /* 0 marks a free slot */
}

static const unsigned char *slot_key(const struct hashmap_slot *s)
{
	return s->klen <= HASHMAP_INLINE_KEY ? s->key.inl : s->key.ptr;
}

static void slot_release(struct hashmap_slot *s)
{
	if (s->klen > HASHMAP_INLINE_KEY)
		free(s->key.ptr);
}

void hashmap_init(struct hashmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hashmap_free(struct hashmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].hash)
			slot_release(&m->slots[i]);
	free(m->slots);
	hashmap_init(m);
}

/* The slot holding key, or the free slot where it would go. */
static size_t find(const struct hashmap *m, uint64_t h, const void *key, size_t klen)
{
	size_t mask = m->cap - 1, i = h & mask;

	while (m->slots[i].hash) {
		const struct hashmap_slot *s = &m->slots[i];
		if (s->hash == h && s->klen == klen && !memcmp(slot_key(s), key, klen))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static int grow(struct hashmap *m)
{
	size_t ncap = m->cap ? 2 * m->cap : MIN_CAP;
	struct hashmap_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns || ncap < m->cap) {
		free(ns);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		const struct hashmap_slot *s = &m->slots[i];
		if (!s->hash)
			continue;
		size_t j = s->hash & (ncap - 1);
		while (ns[j].hash)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s; /* a key pointer moves with its slot */
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

int hashmap_put(struct hashmap *m, const void *key, size_t klen, uint64_t value)
{
	uint64_t h = hash_bytes(key, klen);
	size_t i;

	if (klen > UINT32_MAX)
		return -1;
	if (m->cap) {
		i = find(m, h, key, klen);
		if (m->slots[i].hash) {
			m->slots[i].value = value;
			return 0;
		}
	}
	/* at most 70 % full: probe runs stay short */
	if ((m->n + 1) * 10 > m->cap * 7 && grow(m))
		return -1;
	i = find(m, h, key, klen);
	struct hashmap_slot *s = &m->slots[i];
	if (klen > HASHMAP_INLINE_KEY) {
		s->key.ptr = malloc(klen);
		if (!s->key.ptr)
			return -1;
		memcpy(s->key.ptr, key, klen);
	} else {
		memcpy(s->key.inl, key, klen);
	}
	s->hash = h;
	s->klen = klen;
	s->value = value;
	m->n++;
	return 0;
}

uint64_t *hashmap_ref(const struct hashmap *m, const void *key, size_t klen)
{
	size_t i;

	if (!m->n)
		return NULL;
	i = find(m, hash_bytes(key, klen), key, klen);
	return m->slots[i].hash ? &m->slots[i].value : NULL;
}

bool hashmap_get(const struct hashmap *m, const void *key, size_t klen, uint64_t *value)
{
	const uint64_t *v = hashmap_ref(m, key, klen);

	if (v && value)
		*value = *v;
	return v != NULL;
}

bool hashmap_del(struct hashmap *m, const void *key, size_t klen)
{
	size_t mask = m->cap - 1, i, j;

	if (!m->n)
		return false;
	i = find(m, hash_bytes(key, klen), key, klen);
	if (!m->slots[i].hash)
		return false;
	slot_release(&m->slots[i]);
	m->slots[i].hash = 0;
	m->n--;
	/*
	 * Backward shift: an entry after the hole moves into it unless its home slot lies
	 * cyclically in (hole, entry], where it is still reachable without the hole.
	 */
	for (j = (i + 1) & mask; m->slots[j].hash; j = (j + 1) & mask) {
		size_t home = m->slots[j].hash & mask;
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].hash = 0;
		i = j;
	}
	return true;
}

bool hashmap_next(const struct hashmap *m, size_t *pos, const void **key, size_t *klen,
		  uint64_t *value)
{
	for (; *pos < m->cap; (*pos)++) {
		const struct hashmap_slot *s = &m->slots[*pos];
		if (!s->hash)
			continue;
		if (key)
			*key = slot_key(s);
		if (klen)
			*klen = s->klen;
		if (value)
			*value = s->value;
		(*pos)++;
		return true;
	}
	return false;
}
