/* Fuzz target: C++ symbol names, which come from the traced program's ELF files. */
#include "fuzz.h"
#include "target/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	char out[DEMANGLE_OUT_MAX + 1], small[8];

	if (demangle(s, out, sizeof(out))) {
		size_t n = strnlen(out, sizeof(out));
		if (n == 0 || n == sizeof(out) || strpbrk(out, "\n\r"))
			abort();
	}
	/* a result that does not fit must leave the buffer as it was */
	memset(small, 'x', sizeof(small));
	if (!demangle(s, small, sizeof(small)))
		for (size_t i = 0; i < sizeof(small); i++)
			if (small[i] != 'x')
				abort();
	free(s);
	return 0;
}
