/* Fuzz target: /tmp/perf-PID.map files (written by the traced process: a JIT, or anyone who can write /tmp). */
#include "fuzz.h"
#include "target/addrsyms.h"
#include "target/jitmap.h"
#include "fuzz_syms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addr_syms a;
	int bad = 0;

	addr_syms_init(&a);
	int n = perfmap_parse((const char *)data, size, &a, &bad);
	if (n < 0 || (size_t)n != a.n || bad < 0)
		abort();
	addr_syms_finish(&a);
	fuzz_check_syms(&a);
	addr_syms_free(&a);
	return 0;
}
