/* x86-64 PLT stubs as functions of their own, "name@plt", as perf names them. */
#ifndef DBTAP_TARGET_PLT_H
#define DBTAP_TARGET_PLT_H

#include <gelf.h>

#include "target/elf.h"

struct plt_syms {
	struct elf_sym *v;
	int n;
	char *names; /* the names v points into */
};

/*
 * The stubs of e's .plt (or .plt.sec, where the linker split them for IBT), one per
 * .rela.plt entry, named after the entry's .dynsym symbol. Nothing (n = 0) for other
 * machines or layouts. The file is the traced program's: every index is bounded.
 */
void plt_syms_read(Elf *e, struct plt_syms *out);
void plt_syms_free(struct plt_syms *p);

#endif
