/* Start-up phase marks (DBTAP_PHASES): one timestamp per step, for bench/startup.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/phase.h"

void phase_mark(const char *what)
{
	static int on = -1;
	struct timespec ts;

	if (on < 0)
		on = getenv("DBTAP_PHASES") != NULL;
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "{\"phase\":\"%s\",\"t_s\":%ld.%09ld}\n", what, (long)ts.tv_sec,
		ts.tv_nsec);
}
