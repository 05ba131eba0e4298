/* Folded stacks, sorted like stackcollapse's output so that two runs can be diffed. */
#include <stdlib.h>
#include <string.h>

#include "report/folded.h"

static const struct stack_set *sort_set;

static int cmp_ent(const void *a, const void *b)
{
	const struct stack_ent *x = *(struct stack_ent *const *)a, *y = *(struct stack_ent *const *)b;
	uint32_t n = x->n < y->n ? x->n : y->n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t fx = sort_set->frames[x->off + i], fy = sort_set->frames[y->off + i];
		if (fx == fy)
			continue;
		int c = strcmp(stack_set_name(sort_set, fx), stack_set_name(sort_set, fy));
		if (c)
			return c;
	}
	return x->n < y->n ? -1 : x->n > y->n;
}

int folded_write(const struct stack_set *ss, FILE *f)
{
	const struct stack_ent **order = malloc((ss->n ? ss->n : 1) * sizeof(*order));

	if (!order)
		return -1;
	for (size_t i = 0; i < ss->n; i++)
		order[i] = &ss->v[i];
	sort_set = ss;
	qsort(order, ss->n, sizeof(*order), cmp_ent);
	for (size_t i = 0; i < ss->n; i++) {
		const struct stack_ent *e = order[i];
		if (!e->count)
			continue;
		for (uint32_t k = 0; k < e->n; k++) {
			if (k)
				fputc(';', f);
			fputs(stack_set_name(ss, ss->frames[e->off + k]), f);
		}
		fprintf(f, " %llu\n", (unsigned long long)e->count);
	}
	free(order);
	return ferror(f) ? -1 : 0;
}
