/* Fuzz target: postmaster.pid as any user who can write a data directory leaves it. */
#include "fuzz.h"
#include "pg/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct pg_pidfile pf;

	memset(&pf, 0, sizeof(pf));
	pg_pidfile_parse(s, &pf);
	free(s);
	return 0;
}
