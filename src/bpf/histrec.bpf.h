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

/* v (ns) into ll[LL_BUCKETS] (percentiles) and disp[DISP_SLOTS] (the exact bars). */
static __always_inline void hist_record(__u64 *ll, __u64 *disp, __u64 v)
{
	__u32 idx = loglinear_index(v);

	if (idx < LL_BUCKETS)
		ll[idx]++;
	idx = disp_slot(disp_kind, v / disp_div, disp_min, disp_step, disp_n);
	if (idx < DISP_SLOTS)
		disp[idx]++;
}

#endif
