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
	PGMARK_ST_MAX,
};

#endif

#ifndef __bpf__
#ifndef DBTAP_BPF_PGMARK_USER_H
#define DBTAP_BPF_PGMARK_USER_H
#include <stdbool.h>

#include "report/hist.h"
#include "target/target.h"

struct pgmark_probe_opts {
	const struct target *target;
	const char *binary; /* the server binary whose USDT notes are attached */
	int major;          /* PostgreSQL major version, 0 if unknown */
	bool statements;    /* query__start/done markers (with text) */
	bool records;       /* markers through the ring buffer; false: histograms only */
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
/* Hands every record waiting to fn without blocking; the number of records, -1 on error. */
int pgmark_probe_consume(struct pgmark_probe *p,
			 void (*fn)(const struct pgmark_rec *r, const char *text, void *arg),
			 void *arg);
int pgmark_probe_read(struct pgmark_probe *p, struct pgmark_totals *t);
int pgmark_probe_nlinks(const struct pgmark_probe *p);
void pgmark_probe_destroy(struct pgmark_probe *p);
#endif
#endif
