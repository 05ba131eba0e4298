/* Fuzz target: /proc/PID/maps lines (paths in them are chosen by whoever maps a file). */
#include "fuzz.h"
#include "target/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct map_entry m;

	if (!proc_parse_maps_line(s, &m)) {
		if (!memchr(m.path, '\0', sizeof(m.path)) || !memchr(m.perms, '\0', sizeof(m.perms)))
			abort();
	}
	free(s);
	return 0;
}
