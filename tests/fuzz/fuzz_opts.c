/* Fuzz target: option values every tracing command parses (-i/-d seconds, --by, --top). */
#include <math.h>

#include "fuzz.h"
#include "cmd/cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct time_opts t = { 0, 0 };
	enum by by;
	int top;

	if (time_opt(&t, 'i', s) == 1 && (!isfinite(t.interval) || t.interval < 0))
		abort();
	if (time_opt(&t, 'd', s) == 1 && (!isfinite(t.duration) || t.duration <= 0))
		abort();
	by_opt(&by, s);
	if (!top_opt(&top, s, "--top") && top <= 0)
		abort();
	free(s);
	return 0;
}
