/* Stacks with counts, merged by content: hash of the frame ids, compared in full on a hit. */
#include <stdlib.h>
#include <string.h>

#include "report/stackset.h"

void stack_set_init(struct stack_set *ss)
{
	memset(ss, 0, sizeof(*ss));
	strpool_init(&ss->names);
	u64map_init(&ss->idx);
}

void stack_set_free(struct stack_set *ss)
{
	strpool_free(&ss->names);
	u64map_free(&ss->idx);
	free(ss->kinds);
	free(ss->frames);
	free(ss->v);
	memset(ss, 0, sizeof(*ss));
}

/* Length of the valid UTF-8 sequence at s (1-4), 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n;
	unsigned min;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

uint32_t stack_set_frame(struct stack_set *ss, const char *name, enum stack_kind kind)
{
	size_t len = strlen(name);
	char *clean = malloc(len + 2), *o = clean;
	const unsigned char *s = (const unsigned char *)name;

	if (!clean)
		return UINT32_MAX;
	while (*s) {
		int l = utf8_len(s);
		if (l == 1 && (*s < 0x20 || *s == 0x7f))
			l = 0;
		if (!l) {
			*o++ = '?';
			s++;
		} else if (*s == ';') {
			*o++ = ':';
			s++;
		} else {
			memcpy(o, s, l);
			o += l;
			s += l;
		}
	}
	if (o == clean)
		*o++ = '?'; /* an empty name would vanish from a folded line */
	*o = '\0';
	uint32_t id = strpool_intern(&ss->names, clean);
	free(clean);
	if (id == UINT32_MAX)
		return id;
	if (id >= ss->kinds_cap) {
		size_t cap = ss->kinds_cap ? ss->kinds_cap * 2 : 256;
		while (cap <= id)
			cap *= 2;
		uint8_t *nk = realloc(ss->kinds, cap);
		if (!nk)
			return UINT32_MAX;
		memset(nk + ss->kinds_cap, 0xff, cap - ss->kinds_cap);
		ss->kinds = nk;
		ss->kinds_cap = cap;
	}
	if (ss->kinds[id] == 0xff)
		ss->kinds[id] = kind;
	return id;
}

int stack_set_add(struct stack_set *ss, const uint32_t *frames, int n, uint64_t count)
{
	uint64_t h = hash_bytes(frames, n * sizeof(*frames), 3), *v;

	for (uint64_t k = h; (v = u64map_get(&ss->idx, k)); k = hash_u64(k + 1)) {
		struct stack_ent *e = &ss->v[*v];
		if (e->n == (uint32_t)n && !memcmp(ss->frames + e->off, frames, n * sizeof(*frames))) {
			e->count += count;
			ss->total += count;
			ss->last = *v;
			return 0;
		}
	}
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? ss->cap * 2 : 1024;
		struct stack_ent *nv = realloc(ss->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		ss->v = nv;
		ss->cap = cap;
	}
	if (ss->nframes + n > ss->frames_cap) {
		size_t cap = ss->frames_cap ? ss->frames_cap * 2 : 16384;
		while (cap < ss->nframes + n)
			cap *= 2;
		uint32_t *nf = realloc(ss->frames, cap * sizeof(*nf));
		if (!nf)
			return -1;
		ss->frames = nf;
		ss->frames_cap = cap;
	}
	memcpy(ss->frames + ss->nframes, frames, n * sizeof(*frames));
	ss->v[ss->n] = (struct stack_ent){ .off = (uint32_t)ss->nframes, .n = (uint32_t)n, .count = count };
	ss->nframes += n;
	uint64_t k = h;
	while (u64map_get(&ss->idx, k))
		k = hash_u64(k + 1);
	if (u64map_put(&ss->idx, k, ss->n) < 0)
		return -1;
	ss->last = ss->n++;
	ss->total += count;
	return 0;
}
