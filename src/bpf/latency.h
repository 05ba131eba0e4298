/* Structures shared by latency.bpf.c and its user side: per-pair histograms, statements. */
#ifndef DBTAP_BPF_LATENCY_H
#define DBTAP_BPF_LATENCY_H

#include "bpf/bestatus.h"
#include "bpf/loglinear.h"
#include "bpf/slothist.h"

#define LAT_MAX_PAIRS 8
#define LAT_TEXT_LEN  256   /* a power of two: the hash loop masks its index with it */
#define LAT_MAX_STMTS 10000 /* statement keys kept by latency query; more are `dropped` */
#define LAT_MAX_BACKENDS 16384 /* backend threads the PgBackendStatus path follows */

/* Cumulative per pair, one per CPU. */
struct lat_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 unmatched; /* END hits with no START on that thread */
	__u64 dropped;   /* statements not grouped: the statement map was full */
	__u64 untracked; /* PgBackendStatus path: switch-outs of threads the map had no room for */
	__u64 at_exit;   /* PgBackendStatus path: statements whose end was seen as the backend exited */
	__u64 looks;     /* PgBackendStatus path: switch-outs (and exits) of traced threads looked at */
	__u64 commits;   /* PgBackendStatus path: transactions committed, from the looks */
	__u64 aborts;    /* PgBackendStatus path: transactions aborted (transaction__abort) */
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

/* latency query on the PgBackendStatus path: one backend thread, keyed by thread id. */
struct lat_be {
	__u64 be;                /* its row, once MyBEEntry was set */
	struct bestatus_track t;
	__u32 tgid;
	__u32 aborted; /* transaction__abort fired since the row was last seen idle */
};

/* latency query: one statement key's finished statements, one per CPU. */
struct lat_stmt {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
};

/* A statement key as read from the maps: figures summed over CPUs, its sample text. */
struct lat_stmt_entry {
	__u64 key;
	struct lat_stmt s;
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
	bool query;              /* the pair is query__start -> query__done: group statements */
	bool raw;                /* key statements by their exact text, not literal-blind */
	bool no_threads;         /* no per-thread figures (lat_probe_read_threads finds none) */
	/* serve (query only): histograms per backend and per statement at these bounds */
	const uint32_t *slot_bounds;
	int nslot_bounds;
	int stmt_hists;          /* statement keys given a histogram */
	int max_starts;          /* threads with a START kept (0: 65,536; an LRU, allocated whole
	                            when the map is made: about 50 ns an entry) */
	bool bk_titles;          /* each backend's title beside its histogram (no tps to say it) */
	/*
	 * query: the PgBackendStatus path (bestatus.bpf.h) instead of the probe pair, with
	 * abort (transaction__abort) telling failed statements; NULL: starts/ends.
	 */
	const struct bestatus_cfg *bestatus;
	const struct probe *abort;
};

/* NULL with an error and a hint printed; nothing stays attached then. */
struct lat_probe *lat_probe_open(const struct lat_probe_opts *o);
/* Cumulative figures of pair i, summed over CPUs. 0 or -1. */
int lat_probe_read(struct lat_probe *lp, int pair, struct lat_hist *out);
/* Per-thread figures: count returned, malloc'd arrays. */
int lat_probe_read_threads(struct lat_probe *lp, struct lat_key **keys, struct lat_thread **vals);
/*
 * STARTs waiting for their END (one per thread and pair at most); on the PgBackendStatus
 * path, backends inside a statement at their last switch-out.
 */
int lat_probe_pending(struct lat_probe *lp);
/* latency query: every statement key, count returned, a malloc'd array; -1 on failure. */
int lat_probe_read_stmts(struct lat_probe *lp, struct lat_stmt_entry **out);
/* Probe sites attached (USDT probes have one or more, functions one; tracepoints one each). */
int lat_probe_nlinks(const struct lat_probe *lp);
/* The loaded programs' fds and names (for their run-time statistics); count, at most max. */
int lat_probe_progs(const struct lat_probe *lp, int *fds, const char **names, int max);
/* serve: per-backend (struct bk_hkey) and per-statement (__u64, per CPU) slot histograms. */
int lat_probe_bk_hists_fd(const struct lat_probe *lp);
int lat_probe_stmt_hists_fd(const struct lat_probe *lp);
/* With bk_titles: the backends' titles (struct bk_hkey -> struct slothist_title). */
int lat_probe_bk_titles_fd(const struct lat_probe *lp);
int lat_probe_ncpus(const struct lat_probe *lp);
int lat_probe_hist_drops(const struct lat_probe *lp, struct slothist_drops *out);
void lat_probe_destroy(struct lat_probe *lp);
#endif

#endif
