/* Fuzz target: the JSON reader behind stat --compare FILE (a saved run is outside input). */
#include "fuzz.h"
#include "report/jsonread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	const char *err = NULL;
	struct jv *v = jv_parse(s, &err);

	if (!v && !err)
		abort(); /* a refusal always says why */
	if (v) {
		/* walk what the compare code walks */
		jv_num(jv_get(v, "report"), 0);
		jv_str(jv_get(v, "report"), NULL);
		jv_bool(jv_get(v, "x"), false);
	}
	jv_free(v);
	free(s);
	return 0;
}
