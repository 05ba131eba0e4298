/* Open addressing with linear probing: symbol caches and frame tables of tens of thousands of entries. */
#include <stdlib.h>
#include <string.h>

#include "util/hashtab.h"

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return hash_u64(h);
}

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->keys[i] == key)
			return &m->vals[i];
	}
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct u64map nm = {
		.keys = malloc(cap * sizeof(uint64_t)),
		.vals = malloc(cap * sizeof(uint64_t)),
		.used = calloc(cap, sizeof(bool)),
		.cap = cap,
	};

	if (!nm.keys || !nm.vals || !nm.used) {
		u64map_free(&nm);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			u64map_put(&nm, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = nm;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	/* at most half full: probes stay short */
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i]) {
			m->used[i] = true;
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return 0;
		}
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
}

void strpool_init(struct strpool *p)
{
	memset(p, 0, sizeof(*p));
	u64map_init(&p->idx);
}

void strpool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->next);
	u64map_free(&p->idx);
	memset(p, 0, sizeof(*p));
}

uint32_t strpool_intern(struct strpool *p, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s), 0), *first = u64map_get(&p->idx, h);

	for (uint32_t id = first ? (uint32_t)*first : UINT32_MAX; id != UINT32_MAX; id = p->next[id])
		if (!strcmp(p->strs[id], s))
			return id;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		char **ns = realloc(p->strs, cap * sizeof(*ns));
		if (!ns)
			return UINT32_MAX;
		p->strs = ns;
		uint32_t *nx = realloc(p->next, cap * sizeof(*nx));
		if (!nx)
			return UINT32_MAX;
		p->next = nx;
		p->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	uint32_t id = p->n++;
	p->strs[id] = copy;
	p->next[id] = first ? (uint32_t)*first : UINT32_MAX;
	if (u64map_put(&p->idx, h, id) < 0) {
		p->n--;
		free(copy);
		return UINT32_MAX;
	}
	return id;
}
