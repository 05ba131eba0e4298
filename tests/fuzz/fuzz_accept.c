/* Fuzz target: the Accept header of a scrape of dbtap serve, which anyone who can connect writes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "fuzz.h"
#include "serve/accept.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	bool om = accept_wants_openmetrics(s);

	/* a pure function: the same header, the same answer */
	if (accept_wants_openmetrics(s) != om)
		abort();
	/* no OpenMetrics without its media type named */
	if (om && !strcasestr(s, "application/openmetrics-text"))
		abort();
	free(s);
	return 0;
}
