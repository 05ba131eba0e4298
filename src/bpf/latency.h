/* Structures shared by latency.bpf.c and its user side: per-pair histograms, query events. */
#ifndef DBTAP_BPF_LATENCY_H
#define DBTAP_BPF_LATENCY_H

#include "bpf/loglinear.h"

#define LAT_MAX_PAIRS 8
#define LAT_TEXT_LEN  256

/* Cumulative per pair, one per CPU. */
struct lat_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 unmatched; /* END hits with no START on that thread */
	__u64 dropped;   /* query events lost to a full ring buffer */
	__u64 ll[LL_BUCKETS];
	__u64 disp[DISP_SLOTS];
};

struct lat_key {
	__u32 tid;
	__u32 pair;
};

/* Per thread and pair, cumulative. */
struct lat_thread {
	__u64 count;
	__u64 sum_ns;
	__u32 tgid;
	__u32 pad;
};

/* latency query: one finished statement. */
struct lat_query_event {
	__u32 pid;
	__u32 tid;
	__u64 dur_ns;
	char text[LAT_TEXT_LEN];
};

#ifndef __VMLINUX_H__
#include <stdbool.h>

#include "report/hist.h"
#include "target/probespec.h"
#include "target/target.h"

struct lat_probe;

struct lat_probe_opts {
	struct target *target;
	const struct hist_spec *hist;
	/* pairs: starts[i] -> ends[i] */
	const struct probe *starts, *ends;
	int npairs;
	bool query;              /* the pair is query__start -> query__done: stream texts */
	void (*on_query)(void *ctx, const struct lat_query_event *e);
	void *ctx;
};

/* NULL with an error and a hint printed; nothing stays attached then. */
struct lat_probe *lat_probe_open(const struct lat_probe_opts *o);
/* Cumulative figures of pair i, summed over CPUs. 0 or -1. */
int lat_probe_read(struct lat_probe *lp, int pair, struct lat_hist *out);
/* Per-thread figures: count returned, malloc'd arrays. */
int lat_probe_read_threads(struct lat_probe *lp, struct lat_key **keys, struct lat_thread **vals);
/* STARTs waiting for their END (one per thread and pair at most). */
int lat_probe_pending(struct lat_probe *lp);
/* Delivers queued query events to on_query. */
int lat_probe_consume(struct lat_probe *lp);
int lat_probe_nlinks(const struct lat_probe *lp);
void lat_probe_destroy(struct lat_probe *lp);
#endif

#endif
