/* User side of filter.bpf.h: configures a skeleton's filter for a resolved target. */
#ifndef DBTAP_BPF_FILTER_H
#define DBTAP_BPF_FILTER_H

#include "target/target.h"

/* Before load: sets the rodata of any skeleton that includes filter.bpf.h. */
#define TARGET_FILTER_RODATA(skel, t) do {                                          \
	(skel)->rodata->filter_postmaster = (t)->kind == TARGET_PG ? (t)->pg.postmaster : 0; \
	(skel)->rodata->filter_use_pids = (t)->kind == TARGET_PIDS;                  \
	(skel)->rodata->filter_tid = (t)->kind == TARGET_TID ? (t)->tid : 0;         \
} while (0)

/* After load: fills the filter_pids map (fd of skel->maps.filter_pids). 0 or -1. */
int target_filter_fill(int map_fd, const struct target *t);

#endif
