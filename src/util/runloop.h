/* The interval/duration loop of every tracing command, with clean Ctrl-C and SIGTERM. */
#ifndef DBTAP_UTIL_RUNLOOP_H
#define DBTAP_UTIL_RUNLOOP_H

#include <stdbool.h>
#include <stdint.h>

struct runloop {
	uint64_t start_ns;
	uint64_t interval_ns; /* 0: no interval reports, only the final one */
	uint64_t duration_ns; /* 0: until Ctrl-C */
	uint64_t next_ns;
	uint64_t last_ns;     /* time of the previous tick, for rates */
};

enum runloop_event {
	RUNLOOP_TICK,    /* an interval ended: print an interval report */
	RUNLOOP_DONE,    /* -d expired: print the final report */
	RUNLOOP_STOPPED, /* SIGINT/SIGTERM: print the final report */
};

/* Installs SIGINT/SIGTERM handlers (no SA_RESTART) and starts the clock. */
void runloop_init(struct runloop *rl, double interval_s, double duration_s);
/*
 * Sleeps until the next interval end, the duration end or a signal, whichever is
 * first; poll_ms > 0 wakes up that often to call check (a target-exit check, say),
 * and check returning false ends the loop with RUNLOOP_DONE.
 */
enum runloop_event runloop_wait(struct runloop *rl, int poll_ms, bool (*check)(void *), void *arg);
/*
 * Milliseconds (rounded up) until the next interval end or the duration end, at most
 * max_ms; 0 when one is due. How long a poll callback may block in poll() without
 * making the next interval report late.
 */
int runloop_due_ms(const struct runloop *rl, int max_ms);
/* Seconds since the previous tick (or start), for per-second rates; advances it. */
double runloop_elapsed(struct runloop *rl);
/* Seconds since runloop_init. */
double runloop_total(const struct runloop *rl);
bool runloop_stopped(void);
/*
 * Teardown after the final report: from now on SIGINT/SIGTERM end the process at once
 * (status 128 + signal), and note (say "detaching probes") goes to stderr if the
 * teardown is still running after delay_ms. runloop_teardown_end() disarms both.
 */
void runloop_teardown_begin(const char *note, int delay_ms);
void runloop_teardown_end(void);
/* SIGINT/SIGTERMs received so far: one more during teardown means "exit now". */
unsigned runloop_signals(void);

uint64_t now_ns(void);
/* Parses seconds ("2", "0.5"); -1 on garbage. */
double parse_seconds(const char *s);

#endif
