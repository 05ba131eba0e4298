/* Fuzz target: label values serve exports (statement texts and titles any client shapes). */
#include "fuzz.h"
#include "serve/expo.h"

/* Whether s is valid UTF-8 without control characters. */
static int clean(const unsigned char *s)
{
	while (*s) {
		int n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 :
			(*s & 0xf8) == 0xf0 ? 4 : 0;
		if (!n || *s < 0x20 || *s == 0x7f)
			return 0;
		for (int i = 1; i < n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return 0;
		s += n;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	size_t max = size % 300 + 1;
	char *out = malloc(max);

	if (!out)
		abort();
	expo_clean_value(s, out, max);
	if (strlen(out) >= max || !clean((const unsigned char *)out))
		abort();
	free(out);
	free(s);
	return 0;
}
