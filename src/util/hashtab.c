/* The string pool (names interned once, ids stable) and the byte hash beside util/hashmap. */
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
