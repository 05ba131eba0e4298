/* Structs shared by stat.bpf.c and stat.c: per-statement counter deltas, split at context switches. */
#ifndef DBTAP_BPF_STAT_H
#define DBTAP_BPF_STAT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define STAT_MAX_EVENTS 8   /* counters read per statement */
#define STAT_TEXT_MAX   512 /* statements are told apart by their first bytes */
#define STAT_KNOWN      8   /* statement keys a thread remembers having a text (a power of 2) */
/* histogram buckets on the PgBackendStatus path, preallocated (stat.c says why) */
#define STAT_HISTS_PREALLOC 65536

/*
 * Figures kept per statement: the counters (0..nctr-1), then three the BPF program
 * measures itself at sched_switch, where it already runs: wall time, context switches
 * (switch-outs of the backend mid-statement) and CPU migrations (a switch-in on another
 * CPU than the last).
 */
#define STAT_FIG_WALL   (STAT_MAX_EVENTS + 0)
#define STAT_FIG_CS     (STAT_MAX_EVENTS + 1)
#define STAT_FIG_MIGR   (STAT_MAX_EVENTS + 2)
#define STAT_FIGS       (STAT_MAX_EVENTS + 3)

/* --per transaction keys. */
#define STAT_KEY_COMMIT 1
#define STAT_KEY_ABORT  2

/* Attach cookies of the argument-less probes, all through one link. */
enum { STAT_PROBE_QUERY_DONE, STAT_PROBE_TXN_START, STAT_PROBE_TXN_COMMIT, STAT_PROBE_TXN_ABORT };

/*
 * A statement (or transaction) in progress on one thread. On the PgBackendStatus path
 * (stat.bpf.c on_switch_be) the same entry also holds what the thread's switch-outs
 * told so far: the row's address and the statements already counted.
 */
struct stat_run {
	__u64 key;                      /* statement hash, or 0 until a transaction ends */
	__u64 start_ns;
	__u64 base[STAT_MAX_EVENTS];    /* counter at the last switch-in (or the start) */
	__u64 base_ena[STAT_MAX_EVENTS];
	__u64 base_run[STAT_MAX_EVENTS];
	__u64 acc[STAT_MAX_EVENTS];     /* scaled counts of the segments closed so far */
	__u64 cpus;                     /* bitmask of the CPUs it ran on (id mod 64) */
	__u32 cs, migrations;
	__u32 cpu;                      /* CPU it runs on now, or ran on last */
	__u32 oncpu;
	__u32 unscaled;                 /* bit per counter: a segment had running == 0 */
	__u32 active;                   /* 0 once the statement ended: the entry waits for the next */
	/* the PgBackendStatus path */
	__u64 be;                       /* MyBEEntry: the backend's row, 0 until it has one */
	__s64 stmt_ts;                  /* st_activity_start_timestamp of the statement open, 0 none */
	__s64 done_ts;                  /* that of the last one counted (or not to be counted) */
	__u32 stretch_migr;             /* the stretch in progress began on another CPU */
	__u32 fresh;                    /* switched in from between statements, no read since */
	__u64 known[STAT_KNOWN];        /* keys whose text this thread saw in `texts` */
	__u32 known_next;               /* the slot the next one takes */
	__u32 pad;
};

/* What is aggregated per statement. */
struct stat_agg {
	__u64 calls;
	__u64 sum[STAT_FIGS];
	__u64 unscaled[STAT_MAX_EVENTS]; /* calls where a counter was multiplexed out entirely */
	__u64 cpus;                      /* union of the calls' CPU masks */
	__u64 multi_cpu;                 /* calls that ran on more than one CPU */
};

/* One log-linear histogram bucket of one figure of one statement. */
struct stat_hkey {
	__u64 key;
	__u32 fig;
	__u32 bucket;
};

/* Things the BPF side could not do, reported rather than lost. */
struct stat_drops {
	__u64 agg_full;   /* statements not recorded: the statement map was full */
	__u64 hist_full;  /* histogram samples lost: the bucket map was full */
	__u64 read_err;   /* counter reads that failed */
	__u64 runs_full;  /* statements not followed: the in-progress map was full */
	/*
	 * The PgBackendStatus path: statements that began while the one before was still
	 * the row's at the last switch-out (no switch between them: a pipelining client,
	 * or a reply faster than the backend's way to its next read). Both are counted;
	 * the stretch they shared went to the later one. Statements that began and ended
	 * wholly inside such a stretch are not seen at all.
	 */
	__u64 unseparated;
	__u64 unreadable; /* looks at a row it could not read: decided at the next look */
	__u64 unpaired;   /* stretches whose switch-in was not seen: their counts are not in */
};

/*
 * The PgBackendStatus path's own clock (DBTAP_STAT_SELF_TIME): runs and ns of each part,
 * per CPU, the clock read around them (its own reads included). Off, the code is not
 * there: the flag is read-only, the verifier drops what it guards.
 */
enum {
	STAT_ST_UNTRACED,   /* a switch of two tasks not traced: the dispatch only */
	STAT_ST_OUT,        /* a traced switch-out with its look, from the run's start */
	STAT_ST_IN,         /* a switch-in that read the counters itself */
	STAT_ST_RECV,       /* a traced socket read with its look, from the run's start */
	STAT_ST_RECV_SKIP,  /* a traced socket read that looked at nothing */
	STAT_ST_ROW,        /* in a look: the row's read */
	STAT_ST_TEXT,       /* in a look: a new statement's text read, hashed, kept */
	STAT_ST_EMIT,       /* in a look: a statement counted (aggregate, histograms) */
	STAT_ST_N
};

struct stat_self {
	__u64 runs, ns;
};

#ifndef __bpf__
#include <stdbool.h>
#include <stdint.h>

#include "bpf/bestatus.h"
#include "perf/event.h"
#include "report/sparsehist.h"
#include "target/target.h"

/* One statement (or transaction outcome) as read from the maps. */
struct stat_stmt {
	__u64 key;
	char text[STAT_TEXT_MAX]; /* a raw sample of the statement; "" for transactions */
	struct stat_agg agg;
	struct sparse_hist h[STAT_FIGS]; /* only the buckets the kernel has */
};

struct stat_snapshot {
	struct stat_stmt *v;
	int n;
	struct stat_drops drops;
};

struct stat_probe;

/*
 * Where the statements' boundaries come from with per_query: be.beentry_addr set (the
 * cluster's rows, bestatus_cfg_init()), the backends' PgBackendStatus read at their
 * switch-outs, no trap; 0, the query__start/done USDT probes.
 */
struct stat_probe_opts {
	bool per_query; /* --by query; --by transaction otherwise (always the USDT probes) */
	bool self_time; /* the PgBackendStatus path times its parts (stat_probe_self_time()) */
	struct bestatus_cfg be;
};

/*
 * Opens per-CPU counters for evs (context-switches and cpu-migrations are measured by
 * the program itself), loads stat.bpf.c for the target and attaches it: to
 * sched_switch alone on the PgBackendStatus path, else to the query__start/done
 * (per_query) or transaction__start/commit/abort probes of the target's binary too.
 * Events the machine cannot count get their errno in stat_probe_errors(). 0, or an
 * exit status with the error printed.
 */
int stat_probe_open(struct stat_probe **out, const struct target *t,
		    const struct stat_probe_opts *o, const struct perf_event_desc *evs, int nev);
const int *stat_probe_errors(const struct stat_probe *p);
/* Where statements come from: "pg_backend_status" or "usdt" (the probes, or --by transaction). */
const char *stat_probe_source(const struct stat_probe *p);
/* Number of events that are measured. */
int stat_probe_counted(const struct stat_probe *p);
/* Figure index (STAT_FIG_* or a counter slot) of event ev, -1 when it is not measured. */
int stat_probe_fig(const struct stat_probe *p, int ev);
/* Reads every statement, its sample text and histograms. 0 or -1. */
int stat_probe_read(struct stat_probe *p, struct stat_snapshot *snap);
void stat_snapshot_free(struct stat_snapshot *snap);
/* The parts' runs and ns so far, summed over the CPUs (STAT_ST_*); 0 or -1. */
int stat_probe_self_time(struct stat_probe *p, struct stat_self out[STAT_ST_N]);
void stat_probe_destroy(struct stat_probe *p);
#endif

#endif
