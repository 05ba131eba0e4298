/* Fuzz target: probe specs (usdt:[BIN:]PROV:NAME, uprobe:BIN:FUNC, uretprobe:BIN:FUNC). */
#include "fuzz.h"
#include "target/probespec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct probespec p;

	memset(&p, 0, sizeof(p));
	if (!probespec_parse(s, &p)) {
		if (!p.name || (p.kind == PROBE_USDT && !p.provider))
			abort();
		probespec_has_wildcard(&p);
		probespec_free(&p);
	}
	free(s);
	return 0;
}
