/* Fuzz target: --hist SPEC (log2, linear:MIN:MAX:STEP) and the slot arithmetic it feeds. */
#include "fuzz.h"
#include "report/hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct hist_spec spec;

	if (!hist_spec_parse(s, &spec)) {
		uint32_t slots = hist_spec_slots(&spec);
		uint64_t probe[] = { 0, 1, spec.min, spec.max, spec.max + 1, UINT64_MAX };

		int colons = 0;

		for (const char *p = s; *p; p++)
			colons += *p == ':';
		/* linear:MIN:MAX:STEP exactly: no field dropped, none added */
		if (spec.kind == DISP_LINEAR && colons != 3)
			abort();
		if (slots < 3 || slots > DISP_SLOTS)
			abort();
		if (spec.kind == DISP_LINEAR && (!spec.step || spec.max <= spec.min || !spec.n))
			abort();
		for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++)
			if (hist_spec_slot(&spec, probe[i]) >= slots)
				abort();
	}
	free(s);
	return 0;
}
