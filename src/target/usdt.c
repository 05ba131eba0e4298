/* Lists the USDT probes of a binary from its .note.stapsdt section. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "target/elf.h"
#include "target/usdt.h"
#include "util/error.h"

#define NT_STAPSDT 3

static void add_note(struct usdt_list *l, const char *desc, size_t len, uint64_t base_addr)
{
	if (len < 3 * 8 + 3)
		return;
	uint64_t pc, base, sema;
	memcpy(&pc, desc, 8);
	memcpy(&base, desc + 8, 8);
	memcpy(&sema, desc + 16, 8);
	/* provider, name and arguments: NUL-terminated strings inside the descriptor */
	const char *prov = desc + 24, *end = desc + len;
	const char *pend = memchr(prov, '\0', end - prov);
	if (!pend || pend + 1 >= end)
		return;
	const char *name = pend + 1;
	const char *nend = memchr(name, '\0', end - name);
	if (!nend)
		return;
	const char *args = nend + 1; /* may be end: no argument string */
	size_t alen = strnlen(args, end - args);

	struct usdt_note *n, *v = realloc(l->notes, (l->n + 1) * sizeof(*l->notes));
	if (!v)
		return;
	l->notes = v;
	n = &l->notes[l->n++];
	memset(n, 0, sizeof(*n));
	snprintf(n->provider, sizeof(n->provider), "%s", prov);
	snprintf(n->name, sizeof(n->name), "%s", name);
	if (alen >= sizeof(n->args))
		alen = sizeof(n->args) - 1;
	memcpy(n->args, args, alen);
	/* Prelinked binaries: the note records the link-time .stapsdt.base; adjust. */
	if (base_addr && base) {
		pc += base_addr - base;
		if (sema)
			sema += base_addr - base;
	}
	n->pc = pc;
	n->base = base;
	n->semaphore = sema;
}

int usdt_list_read(const char *path, struct usdt_list *list)
{
	memset(list, 0, sizeof(*list));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		binary_open_error(path);
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx)) {
		if (e)
			elf_end(e);
		close(fd);
		error("'%s' is not an ELF file", path);
		hint("name the program's executable, not a script or a wrapper that starts it");
		return -1;
	}

	uint64_t base_addr = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(nm, ".stapsdt.base"))
			base_addr = sh.sh_addr;
	}
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			add_note(list, (char *)data->d_buf + desc_off, nh.n_descsz, base_addr);
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

void usdt_list_free(struct usdt_list *list)
{
	free(list->notes);
	memset(list, 0, sizeof(*list));
}

int usdt_list_count_probes(const struct usdt_list *list, int *providers)
{
	int probes = 0, provs = 0;
	for (int i = 0; i < list->n; i++) {
		const struct usdt_note *a = &list->notes[i];
		bool seen_probe = false, seen_prov = false;
		for (int j = 0; j < i; j++) {
			const struct usdt_note *b = &list->notes[j];
			if (!strcmp(a->provider, b->provider)) {
				seen_prov = true;
				if (!strcmp(a->name, b->name))
					seen_probe = true;
			}
		}
		probes += !seen_probe;
		provs += !seen_prov;
	}
	if (providers)
		*providers = provs;
	return probes;
}

const struct usdt_note *usdt_list_find(const struct usdt_list *list, const char *provider,
				       const char *name)
{
	for (int i = 0; i < list->n; i++) {
		const struct usdt_note *n = &list->notes[i];
		if ((!provider || !strcmp(n->provider, provider)) && !strcmp(n->name, name))
			return n;
	}
	return NULL;
}
