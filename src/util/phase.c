/* Start-up phase marks (DBTAP_PHASES): one timestamp per step, for bench/startup.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "util/phase.h"

void phase_mark(const char *what)
{
	static int on = -1;
	struct timespec ts, cpu;
	struct rusage ru;

	if (on < 0)
		on = getenv("DBTAP_PHASES") != NULL;
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/*
	 * The CPU this step took, which a loaded machine does not inflate as it does the
	 * wall clock: this thread's (not the symbol-reading one's) and that of the children
	 * waited for (the attaching ones, which create the links).
	 */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	getrusage(RUSAGE_CHILDREN, &ru);
	double cpu_s = cpu.tv_sec + cpu.tv_nsec / 1e9 + ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	fprintf(stderr, "{\"phase\":\"%s\",\"t_s\":%ld.%09ld,\"cpu_s\":%.6f}\n", what,
		(long)ts.tv_sec, ts.tv_nsec, cpu_s);
}
