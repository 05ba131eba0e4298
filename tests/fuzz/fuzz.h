/* What every libFuzzer target shares: a NUL-terminated copy of the input, quiet stderr. */
#ifndef DBTAP_TESTS_FUZZ_H
#define DBTAP_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The input as a C string, cut at its first NUL: what a parser of command-line words
 * or of text read with fgets sees. A fresh allocation of exactly the used size, so
 * AddressSanitizer catches a read one byte past the end.
 */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/*
 * The parsers print their errors and hints on stderr: tests/fuzz/run passes
 * -close_fd_mask=2, which keeps libFuzzer's and the sanitizers' reports.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
