/* Adding a latency to a pgmark histogram: one code for the probes (pgmark.bpf.c) and the switch-out reading (pgmarksw.bpf.h). */
#ifndef DBTAP_BPF_PGMARKHIST_BPF_H
#define DBTAP_BPF_PGMARKHIST_BPF_H

#include "bpf/pgmark.h"

/*
 * loglinear_index() as a global function: its comparisons are branches the verifier
 * walked again on each path of the caller that reached them; global, it checks them once.
 */
__noinline int pgmark_ll_index(__u64 v)
{
	return (int)loglinear_index(v);
}

static __always_inline void pgmark_hist_add(struct pgmark_hist *h, __u64 d)
{
	__u64 idx;

	h->count++;
	h->sum_ns += d;
	idx = (__u32)pgmark_ll_index(d);
	/* one register for the test and the index, as the verifier needs to see it */
	barrier_var(idx);
	if (idx < LL_BUCKETS)
		h->ll[idx]++;
}

#endif
