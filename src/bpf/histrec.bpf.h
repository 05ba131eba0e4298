/* Recording a duration into a log-linear histogram and its --hist display slots, once. */
#ifndef DBTAP_BPF_HISTREC_BPF_H
#define DBTAP_BPF_HISTREC_BPF_H

#include "bpf/loglinear.h"

/* Display slots (--hist), set before load by HISTREC_RODATA() (loglinear.h). */
const volatile __u32 disp_kind = DISP_LOG2;
const volatile __u64 disp_min = 0;
const volatile __u64 disp_step = 1;
const volatile __u32 disp_n = 0;
const volatile __u64 disp_div = 1000; /* ns -> the display unit (us) */

/*
 * The two indexes of v, as global functions: the comparisons of loglinear_index() and
 * disp_slot() are branches to the verifier, which walked every combination of them
 * again on each path of the caller that reached them. Global, each is checked once.
 */
__noinline int hist_ll_index(__u64 v)
{
	return (int)loglinear_index(v);
}

__noinline int hist_disp_index(__u64 v)
{
	return (int)disp_slot(disp_kind, v / disp_div, disp_min, disp_step, disp_n);
}

/* v (ns) into ll[LL_BUCKETS] (percentiles) and disp[DISP_SLOTS] (the exact bars). */
static __always_inline void hist_record(__u64 *ll, __u64 *disp, __u64 v)
{
	__u64 idx = (__u32)hist_ll_index(v);

	/* one register for the test and the index, as the verifier needs to see it */
	barrier_var(idx);
	if (idx < LL_BUCKETS)
		ll[idx]++;
	idx = (__u32)hist_disp_index(v);
	barrier_var(idx);
	if (idx < DISP_SLOTS)
		disp[idx]++;
}

#endif
