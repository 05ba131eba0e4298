/* Start-up phases timed on request: where the milliseconds before "tracing" go. */
#ifndef DBTAP_UTIL_PHASE_H
#define DBTAP_UTIL_PHASE_H

/*
 * With DBTAP_PHASES in the environment, prints `{"phase":WHAT,"t_s":MONOTONIC}` on
 * stderr (CLOCK_MONOTONIC, the clock a parent measuring from exec reads too);
 * otherwise nothing, at the cost of one branch.
 */
void phase_mark(const char *what);

#endif
