/* Fuzz target: event lists for stat -e (perf's names through libpfm4, modifiers, cpu/../). */
#include "fuzz.h"
#include "perf/event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct perf_event_desc *evs = NULL;
	int n = 0;

	if (size > 4096) { /* libpfm4 is slow on huge words; the list logic is what is fuzzed */
		free(s);
		return 0;
	}
	if (!perf_event_parse_list(s, &evs, &n)) {
		for (int i = 0; i < n; i++)
			if (!memchr(evs[i].name, '\0', sizeof(evs[i].name)))
				abort();
	}
	free(evs);
	free(s);
	return 0;
}
