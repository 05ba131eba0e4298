/* A sorted table of named address ranges (kernel symbols, JIT code) looked up by address. */
#ifndef DBTAP_TARGET_ADDRSYMS_H
#define DBTAP_TARGET_ADDRSYMS_H

#include <stddef.h>
#include <stdint.h>

struct addr_sym {
	uint64_t start, size; /* size 0: up to the next symbol (kallsyms has no sizes) */
	uint32_t name;        /* offset into names */
	uint32_t seq;         /* order of addition: a later definition wins on overlap */
};

struct addr_syms {
	struct addr_sym *v;
	size_t n, cap;
	char *names;          /* NUL-separated */
	size_t names_len, names_cap;
	int sorted;
};

void addr_syms_init(struct addr_syms *a);
void addr_syms_free(struct addr_syms *a);
/* Adds [start, start+size) named name (len bytes, not NUL-terminated); -1 on ENOMEM. */
int addr_syms_add(struct addr_syms *a, uint64_t start, uint64_t size, const char *name, size_t len);
/* Sorts; call once after the last add. */
void addr_syms_finish(struct addr_syms *a);
/* The name covering addr (and its start in *start), or NULL. */
const char *addr_syms_lookup(const struct addr_syms *a, uint64_t addr, uint64_t *start);

#endif
