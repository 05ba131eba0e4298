/* Structs shared by pgmark.bpf.c and pgmark.c: PostgreSQL's transactions, statements and checkpoints as timed markers, and their latency histograms. */
#ifndef DBTAP_BPF_PGMARK_H
#define DBTAP_BPF_PGMARK_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "bpf/loglinear.h"

/* Statement text kept per query__start: enough to tell statements apart once normalized. */
#define PGMARK_TEXT_LEN 192

/* What a probe hit was; also the attach cookie of the probes that take no argument. */
enum pgmark_kind {
	PGMARK_TXN_START = 1,
	PGMARK_TXN_COMMIT,
	PGMARK_TXN_ABORT,
	PGMARK_QUERY_START, /* the record carries the statement's text */
	PGMARK_QUERY_DONE,
	PGMARK_CKPT_START,
	PGMARK_CKPT_DONE,
	/* whole spans, read from PgBackendStatus at a switch-out (struct pgmark_span_rec) */
	PGMARK_TXN_SPAN,
	PGMARK_STMT_SPAN, /* with the statement's text */
	PGMARK_KINDS,
};

/* One ring buffer record; text[] follows only for PGMARK_QUERY_START. */
struct pgmark_rec {
	__u32 kind;
	__u32 pid;
	__u32 tid;
	__u32 len;     /* bytes of text, NUL included; 0 without text */
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

struct pgmark_text_rec {
	struct pgmark_rec h;
	char text[PGMARK_TEXT_LEN];
};

#define PGMARK_ABORTED 1u /* pgmark_span_rec.flags */

/*
 * A transaction or statement that ended, read whole from the backend's PgBackendStatus
 * at its switch-out (bpf/pgmarksw.bpf.h): h.time_ns is its end, t0_ns its start; text[]
 * follows only for PGMARK_STMT_SPAN.
 */
struct pgmark_span_rec {
	struct pgmark_rec h;
	__u64 t0_ns;
	__u32 flags;
	__u32 pad;
	char text[PGMARK_TEXT_LEN];
};

#define PGMARK_SPAN_REC_NOTEXT (sizeof(struct pgmark_span_rec) - PGMARK_TEXT_LEN)

/* Latencies of finished transactions or statements, one per CPU, cumulative. */
struct pgmark_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 ll[LL_BUCKETS]; /* ns, log-linear (bpf/loglinear.h) */
};

/* Counters per CPU, cumulative. */
enum pgmark_stat {
	PGMARK_ST_COMMITS,
	PGMARK_ST_ABORTS,
	PGMARK_ST_RING_FULL, /* records dropped: the ring buffer was full */
	PGMARK_ST_THREADS_FULL, /* backends not followed at their switches: the map was full */
	PGMARK_ST_MAX,
};

/* What the switch-out reading (bpf/pgmarksw.bpf.h) keeps of a backend between switches. */
#define PGMARK_MAX_THREADS 16384
struct pgmark_thread {
	__u64 be;       /* its PgBackendStatus row (MyBEEntry); 0 until the backend has one */
	__u64 raw;      /* the row's st_activity_raw: the statement's text */
	__s64 act_ts;   /* st_activity_start_timestamp of the last statement taken (or first seen) */
	__s64 xact_ts;  /* st_xact_start_timestamp of the transaction open, 0 none */
	__u32 flags;    /* PGMARK_TH_* */
	__u32 pad;
	/*
	 * The wait event pointer (my_wait_event_info) as read while the row said it was
	 * this backend's (waitspan.bpf.c): fixed from InitProcess() until the exit, which
	 * gives the row up first. 0 not read.
	 */
	__u64 wptr;
};

#define PGMARK_TH_SEEN    1u /* seen once: what it showed then was the baseline */
#define PGMARK_TH_UNTIMED 2u /* the open transaction began before it was first seen */
#define PGMARK_TH_ABORTED 4u /* a subtransaction failed: ending now would be a rollback */
#define PGMARK_TH_FAILED  8u /* in a failed transaction block: it ended at the failure */

#endif

#ifndef __bpf__
#ifndef DBTAP_BPF_PGMARK_USER_H
#define DBTAP_BPF_PGMARK_USER_H
#include <stdbool.h>
#include <stdint.h>

#include "bpf/bestatus.h"
#include "report/hist.h"
#include "target/target.h"

struct pgmark_probe_opts {
	const struct target *target;
	const char *binary; /* the server binary whose USDT notes are attached */
	int major;          /* PostgreSQL major version, 0 if unknown */
	bool statements;    /* query__start/done markers (with text) */
	bool records;       /* markers through the ring buffer; false: histograms only */
	/*
	 * Transactions and statements read from PgBackendStatus by the waits' program at
	 * sched_switch (it writes into this object's maps): only the checkpoint probes here.
	 */
	bool switch_marks;
	/*
	 * The probes' attach goes on beside what the caller does next (the waits' program
	 * loading): pgmark_probe_attached() takes its result before anything else is used.
	 */
	bool attach_later;
};

/* This object's maps, for the program at sched_switch that writes into them. */
struct pgmark_fds {
	int ring, hists, stats, aborted;
};

/*
 * What the program at sched_switch needs to read the markers (bpf/pgmarksw.bpf.h):
 * pgmark's maps, and where the backends' PgBackendStatus rows are (bpf/bestatus.h).
 */
struct pgmark_switch_opts {
	struct pgmark_fds fds;
	struct bestatus_cfg cfg;
	bool records, statements;
};

/* What the kernel counted since the start (summed over CPUs). */
struct pgmark_totals {
	__u64 stats[PGMARK_ST_MAX];
	struct hist txn;  /* transaction latency, ns */
	struct hist stmt; /* statement latency, ns */
};

struct pgmark_probe;

/* 0, or an exit status with the error (naming the probe) and a hint printed. */
int pgmark_probe_open(struct pgmark_probe **out, const struct pgmark_probe_opts *o);
/*
 * With attach_later: waits for the probes' attach. EXIT_OK, or EXIT_FAIL with the error
 * said (nothing of p attached then; destroy it).
 */
int pgmark_probe_attached(struct pgmark_probe *p);
/* Hands every record waiting to fn without blocking; the number of records, -1 on error. */
int pgmark_probe_consume(struct pgmark_probe *p,
			 void (*fn)(const struct pgmark_rec *r, const char *text, void *arg),
			 void *arg);
int pgmark_probe_read(struct pgmark_probe *p, struct pgmark_totals *t);
int pgmark_probe_nlinks(const struct pgmark_probe *p);
void pgmark_probe_fds(const struct pgmark_probe *p, struct pgmark_fds *f);
void pgmark_probe_destroy(struct pgmark_probe *p);
#endif
#endif
