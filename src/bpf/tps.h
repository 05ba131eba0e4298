/* Structures shared by tps.bpf.c and its user side: per-backend and total transaction figures. */
#ifndef DBTAP_BPF_TPS_H
#define DBTAP_BPF_TPS_H

#include "bpf/loglinear.h"

/* One backend (thread), cumulative since attach; written only by that thread. */
struct tps_backend {
	__u64 starts;
	__u64 commits;
	__u64 aborts;
	__u64 timed;      /* commits + aborts whose start was seen */
	__u64 txn_ns;     /* sum of start -> commit/abort over `timed` */
	__u64 cycles;     /* start -> next start on the same backend */
	__u64 cycle_ns;
	__u64 last_start; /* bpf_ktime_get_ns of the latest start, 0 before the first */
	__u64 open_start; /* start of the transaction in progress, 0 when none */
	__u32 tgid;
	__u32 pad;
};

/* Totals, one per CPU (summed by user space), cumulative since attach. */
struct tps_totals {
	__u64 starts;
	__u64 commits;
	__u64 aborts;
	__u64 txn_count;          /* timed transactions */
	__u64 txn_ns;
	__u64 cycles;
	__u64 cycle_ns;
	__u64 ll[LL_BUCKETS];     /* transaction time, ns, log-linear */
	__u64 disp[DISP_SLOTS];   /* transaction time, display units, --hist slots */
};

#endif
