/* Fuzz target: the statement normalizer (texts any client sends) and the kernel's statement hash. */
#include "fuzz.h"
#include "bpf/stathash.h"
#include "pg/probes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	char small[17], *big;
	size_t n = pg_normalize_query(s, small, sizeof(small));
	struct stathash h;

	if (strlen(small) >= sizeof(small))
		abort();
	big = malloc(n + 1);
	if (!big || pg_normalize_query(s, big, n + 1) != n || strlen(big) > n)
		abort();
	stathash_init(&h);
	for (const char *p = s; *p; p++)
		stathash_byte(&h, *p);
	if (!stathash_final(&h))
		abort();
	free(big);
	free(s);
	return 0;
}
