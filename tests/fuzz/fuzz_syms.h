/* What the JIT symbol targets (perfmap, jitdump) check of the table a parser filled. */
#ifndef DBTAP_TESTS_FUZZ_SYMS_H
#define DBTAP_TESTS_FUZZ_SYMS_H

#include "fuzz.h"
#include "target/addrsyms.h"
#include "target/jitmap.h"

/* The promises every JIT symbol source keeps, whatever the input. */
static inline void fuzz_check_syms(const struct addr_syms *a)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct addr_sym *s = &a->v[i];
		if (s->name >= a->names_len)
			abort();
		size_t l = strnlen(a->names + s->name, a->names_len - s->name);
		if (l == a->names_len - s->name || !l || l > JIT_NAME_MAX)
			abort(); /* unterminated, empty or over the cut */
		if (!s->size || s->start + s->size < s->start)
			abort();
		uint64_t start;
		const char *name = addr_syms_lookup(a, s->start, &start);
		if (!name || start > s->start)
			abort(); /* an entry's own start is covered, by it or a later one */
	}
	addr_syms_lookup(a, 0, NULL);
	addr_syms_lookup(a, UINT64_MAX, NULL);
}

#endif
