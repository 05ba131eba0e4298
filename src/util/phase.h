/* Start-up phases timed on request: where the milliseconds before "tracing" go. */
#ifndef DBTAP_UTIL_PHASE_H
#define DBTAP_UTIL_PHASE_H

/*
 * With DBTAP_PHASES in the environment, prints `{"phase":WHAT,"t_s":MONOTONIC,
 * "cpu_s":CPU}` on stderr (CLOCK_MONOTONIC, the clock a parent measuring from exec
 * reads too; CPU: the calling thread's and its waited-for children's, since exec);
 * otherwise nothing, at the cost of one branch.
 */
void phase_mark(const char *what);

#endif
