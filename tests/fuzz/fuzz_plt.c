/* Fuzz target: the PLT relocations and stubs of a (mutated) ELF file, as plt_syms_read reads them. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "target/plt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libelf reads the image in place: a copy of its own, exactly sized */
	char *img = malloc(size ? size : 1);
	struct plt_syms p;
	Elf *e;

	if (!img)
		abort();
	memcpy(img, data, size);
	elf_version(EV_CURRENT);
	e = elf_memory(img, size);
	if (e) {
		plt_syms_read(e, &p);
		for (int i = 0; i < p.n; i++) {
			size_t len = strlen(p.v[i].name);
			/* every stub named "NAME@plt", 16 bytes long */
			if (len < 5 || strcmp(p.v[i].name + len - 4, "@plt") || p.v[i].size != 16)
				abort();
		}
		plt_syms_free(&p);
		elf_end(e);
	}
	free(img);
	return 0;
}
