/* Fuzz target: the recorder's --trigger conditions, and their canonical spelling read back the same. */
#include <string.h>

#include "fuzz.h"
#include "profile/trigger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct trigger t, u;
	char buf[128];

	if (!trigger_parse(s, &t)) {
		if (t.metric >= TRIG_METRICS || t.op > TRIG_LE || !(t.value >= 0) ||
		    !(t.for_s >= 0 && t.for_s <= 3600) || !memchr(t.text, '\0', sizeof(t.text)))
			abort();
		trigger_format(&t, buf, sizeof(buf));
		if (trigger_parse(buf, &u) || u.metric != t.metric || u.op != t.op ||
		    u.value != t.value || u.for_s != t.for_s)
			abort();
	}
	free(s);
	return 0;
}
