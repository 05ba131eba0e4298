/*
 * PLT stubs. A call to a shared library's function goes through a 16-byte stub in the
 * caller's .plt; no symbol covers it, so a sample there would read [binary+0xoff]. perf
 * synthesizes "name@plt" for each stub from the PLT relocations (their order is the
 * stubs' order), and so does this, for the same profile to read the same in both.
 */
#include <stdlib.h>
#include <string.h>

#include "target/plt.h"

#define PLT_ENTRY 16
#define PLT_NAME_MAX 1024

static Elf_Scn *section_named(Elf *e, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(e, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

void plt_syms_read(Elf *e, struct plt_syms *out)
{
	GElf_Ehdr eh;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel, *plt, *dyn;
	size_t shstrndx, nrel, cap = 0, used = 0;
	uint64_t base;

	memset(out, 0, sizeof(*out));
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(e, &shstrndx))
		return;
	rel = section_named(e, shstrndx, ".rela.plt", &rsh);
	if (!rel || rsh.sh_type != SHT_RELA || rsh.sh_entsize != sizeof(Elf64_Rela))
		return;
	/* with IBT the stubs that callers reach are in .plt.sec, without a header entry */
	plt = section_named(e, shstrndx, ".plt.sec", &psh);
	base = plt ? psh.sh_addr : 0;
	if (!plt) {
		plt = section_named(e, shstrndx, ".plt", &psh);
		base = plt ? psh.sh_addr + PLT_ENTRY : 0; /* the first entry calls the resolver */
	}
	if (!plt || psh.sh_type != SHT_PROGBITS || psh.sh_entsize != PLT_ENTRY || !base)
		return;
	dyn = elf_getscn(e, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || dsh.sh_type != SHT_DYNSYM)
		return;
	Elf_Data *rd = elf_getdata(rel, NULL), *dd = elf_getdata(dyn, NULL);
	if (!rd || !dd)
		return;
	nrel = rsh.sh_size / rsh.sh_entsize;
	uint64_t end = psh.sh_addr + psh.sh_size;
	if (end < psh.sh_addr || end <= base)
		return;
	if (nrel > (end - base) / PLT_ENTRY)
		nrel = (end - base) / PLT_ENTRY; /* no stub past the section's end */
	out->v = calloc(nrel ? nrel : 1, sizeof(*out->v));
	if (!out->v)
		return;
	/* the names first, then the pointers: the buffer moves while it grows */
	size_t *at = calloc(nrel ? nrel : 1, sizeof(*at));
	if (!at)
		goto fail;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;
		if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s) ||
		    !(name = elf_strptr(e, dsh.sh_link, s.st_name)) || !*name)
			continue;
		size_t len = strnlen(name, PLT_NAME_MAX + 1);
		if (len > PLT_NAME_MAX)
			continue;
		if (used + len + 5 > cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			while (ncap < used + len + 5)
				ncap *= 2;
			char *nb = realloc(out->names, ncap);
			if (!nb)
				goto fail;
			out->names = nb;
			cap = ncap;
		}
		at[out->n] = used;
		memcpy(out->names + used, name, len);
		memcpy(out->names + used + len, "@plt", 5);
		used += len + 5;
		struct elf_sym *p = &out->v[out->n++];
		p->value = base + i * PLT_ENTRY;
		p->size = PLT_ENTRY;
		p->type = STT_FUNC;
		p->bind = STB_LOCAL;
	}
	for (int i = 0; i < out->n; i++)
		out->v[i].name = out->names + at[i];
	free(at);
	return;
fail:
	free(at);
	plt_syms_free(out);
}

void plt_syms_free(struct plt_syms *p)
{
	free(p->v);
	free(p->names);
	memset(p, 0, sizeof(*p));
}
