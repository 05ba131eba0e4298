/* Fuzz target: the JSON reader and the saved-run checks behind stat --compare FILE (outside input). */
#include "fuzz.h"
#include "report/jsonread.h"
#include "report/savedrun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	const char *err = NULL;
	struct jv *v = jv_parse(s, &err);
	struct savedrun sr;

	if (!v && !err)
		abort(); /* a refusal always says why */
	if (v) {
		/* walk what the compare code walks */
		jv_num(jv_get(v, "report"), 0);
		jv_str(jv_get(v, "report"), NULL);
		jv_bool(jv_get(v, "x"), false);
	}
	jv_free(v);
	/* the whole input as a saved run of each kind: what passes the checks is read */
	for (int k = SAVEDRUN_COUNTING; k <= SAVEDRUN_TRANSACTION; k++) {
		char *text = strdup(s);
		if (!text)
			abort();
		if (savedrun_parse(&sr, "fuzz", text, strlen(text), k) == 0) {
			struct savedrun_count c;
			struct savedrun_row r;
			struct stmt_fig f;
			const char *why;
			if (sr.duration_s <= 0)
				abort(); /* the checks let no 0-second run through */
			for (int i = 0; sr.events && i < sr.events->n; i++)
				savedrun_count(&sr, sr.events->keys[i], i & 1, &c);
			for (int i = 0; i < savedrun_nrows(&sr); i++) {
				savedrun_row(&sr, i, &r);
				savedrun_row_fig(&r, "wall", false, SAVEDRUN_US, &f, &why);
				savedrun_row_fig(&r, "task-clock", true, SAVEDRUN_NS, &f, &why);
				savedrun_row_fig(&r, "page-faults", true, SAVEDRUN_COUNT, &f, &why);
			}
			savedrun_free(&sr);
		}
		free(text);
	}
	free(s);
	return 0;
}
