/* Counting events per process (all threads, later ones through inherit) or per thread. */
#ifndef DBTAP_PERF_COUNTER_H
#define DBTAP_PERF_COUNTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/event.h"

/* One read() with PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING. */
struct counter_value {
	uint64_t value, enabled, running;
};

/* now - prev, field by field (counters only grow; a wrap reads as 0). */
struct counter_value counter_delta(const struct counter_value *now,
				   const struct counter_value *prev);
/*
 * Scales a delta for multiplexing as perf does: value * enabled / running. Returns
 * false when the event was enabled but never on a counter in the window (nothing can
 * be said: not a zero); a window with no enabled time (the task never ran) is a 0;
 * *pct gets the share of the window it was counted (100 without multiplexing).
 */
bool counter_scale(const struct counter_value *d, double *scaled, double *pct);

/* A measured unit: a process (every thread) or one thread. */
struct counter_unit {
	pid_t pid;      /* tgid */
	pid_t tid;      /* a thread unit's tid; 0 for a process */
	int nthreads;
	int *fds;       /* [thread * nev + ev], -1 where not open */
	struct counter_value *prev, *cur; /* per event, summed over the unit's threads */
	bool gone;      /* the process or thread has exited (its last counts are kept) */
};

struct counter_set {
	const struct perf_event_desc *evs;
	int nev;
	int *err;       /* per event: 0, or the errno that kept it from being counted */
	struct counter_unit *units;
	int nunits;
};

void counter_set_init(struct counter_set *s, const struct perf_event_desc *evs, int nev);
void counter_set_free(struct counter_set *s);
/*
 * Opens every event on every thread of pid, disabled, with inherit so threads and
 * children created later are counted too. per_thread: one unit per thread instead of
 * one for the process. An event the machine cannot count gets its errno in s->err and
 * is skipped. 0; 1 when the process is gone (nothing printed: a backend exiting while
 * a cluster's are opened is no error); -1 with an error printed (out of fds).
 */
int counter_set_add_process(struct counter_set *s, pid_t pid, bool per_thread);
/* Closes and forgets the unit added last. */
void counter_set_drop_last(struct counter_set *s);
int counter_set_add_thread(struct counter_set *s, pid_t tid);
/* Enables every counter at once, so all start in the same instant. */
void counter_set_enable(struct counter_set *s);
/* Reads every counter: prev gets the previous reading, cur the new one. */
void counter_set_read(struct counter_set *s);
/* Events counted on at least one unit. */
int counter_set_counted(const struct counter_set *s);

struct target;
/*
 * Opens the counters of a resolved target, by its kind: one thread (-t); each process
 * and all its threads (-p); a cluster (--pg): the postmaster with inherit, so every
 * process it forks from now on is counted, plus each process already running.
 * per_thread: a unit per thread. 0, or an exit status with the error printed.
 */
int counter_set_open_target(struct counter_set *s, struct target *t, bool per_thread);

/* Figures derived from several events, as perf stat prints them after '#'. */
enum counter_metric {
	METRIC_CPUS_UTILIZED, /* task-clock / wall time */
	METRIC_IPC,           /* instructions / cycles */
	METRIC_BRANCH_MISS,   /* branch-misses / branches, % */
	METRIC_CACHE_MISS,    /* cache-misses / cache-references, % */
	METRIC_NR,
};
struct counter_metrics {
	double v[METRIC_NR];
	bool ok[METRIC_NR];
};
/* JSON key and human label of a metric. */
const char *counter_metric_key(enum counter_metric m);
const char *counter_metric_label(enum counter_metric m);
/*
 * vals[i] is event i's scaled count, counted[i] whether it was counted; seconds the
 * wall time of the window. A metric is ok only when every event it needs was counted
 * and its denominator is not zero.
 */
void counter_metrics_compute(const struct perf_event_desc *evs, const double *vals,
			     const bool *counted, int nev, double seconds,
			     struct counter_metrics *m);
/* Unit of an event's count for display: "msec" for the clocks (counted in ns), else "". */
bool counter_event_is_clock(const struct perf_event_desc *ev);

#endif
