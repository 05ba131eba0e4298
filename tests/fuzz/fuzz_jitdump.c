/* Fuzz target: jitdump files (written by the traced process's JIT: LLVM, PostgreSQL's jit_profiling_support). */
#include "fuzz.h"
#include "target/addrsyms.h"
#include "target/jitmap.h"
#include "fuzz_syms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addr_syms a;
	/* a copy exactly as long as the input: any read past it is caught */
	uint8_t *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
	addr_syms_init(&a);
	int n = jitdump_parse(buf, size, &a);
	if (n >= 0 && (size_t)n != a.n)
		abort();
	if (n < 0 && a.n)
		abort(); /* a header that is not a jitdump's adds nothing */
	addr_syms_finish(&a);
	fuzz_check_syms(&a);
	addr_syms_free(&a);
	free(buf);
	return 0;
}
