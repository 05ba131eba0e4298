/* Sorted address ranges with names: binary search, the latest definition winning where ranges overlap. */
#include <stdlib.h>
#include <string.h>

#include "target/addrsyms.h"

void addr_syms_init(struct addr_syms *a)
{
	memset(a, 0, sizeof(*a));
}

void addr_syms_free(struct addr_syms *a)
{
	free(a->v);
	free(a->names);
	memset(a, 0, sizeof(*a));
}

int addr_syms_add(struct addr_syms *a, uint64_t start, uint64_t size, const char *name, size_t len)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		struct addr_sym *nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = cap;
	}
	if (a->names_len + len + 1 > a->names_cap) {
		size_t cap = a->names_cap ? a->names_cap : 16384;
		while (cap < a->names_len + len + 1)
			cap *= 2;
		char *nn = realloc(a->names, cap);
		if (!nn)
			return -1;
		a->names = nn;
		a->names_cap = cap;
	}
	if (a->names_len > UINT32_MAX - len - 1)
		return -1;
	memcpy(a->names + a->names_len, name, len);
	a->names[a->names_len + len] = '\0';
	a->v[a->n] = (struct addr_sym){ .start = start, .size = size,
					.name = (uint32_t)a->names_len, .seq = (uint32_t)a->n };
	a->names_len += len + 1;
	a->n++;
	a->sorted = 0;
	return 0;
}

static int cmp_sym(const void *x, const void *y)
{
	const struct addr_sym *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void addr_syms_finish(struct addr_syms *a)
{
	if (a->n)
		qsort(a->v, a->n, sizeof(*a->v), cmp_sym);
	a->sorted = 1;
}

const char *addr_syms_lookup(const struct addr_syms *a, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = a->n;

	if (!a->sorted || !a->n)
		return NULL;
	/* the last entry with start <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Without sizes (kallsyms) the nearest symbol below covers the address. */
	if (!a->v[lo - 1].size) {
		if (start)
			*start = a->v[lo - 1].start;
		return a->names + a->v[lo - 1].name;
	}
	/*
	 * Walk back over entries that start earlier but may still cover addr (a JIT
	 * region reused for new code): the latest added one that covers it wins.
	 */
	const struct addr_sym *best = NULL;
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 64; steps++) {
		const struct addr_sym *s = &a->v[i];
		if (addr - s->start < s->size && (!best || s->seq > best->seq))
			best = s;
	}
	if (!best)
		return NULL;
	if (start)
		*start = best->start;
	return a->names + best->name;
}
