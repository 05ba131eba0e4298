/* The per-CPU counters of what a program lost or skipped (map full, stack errors), read by
 * its loader and reported: one declaration for every program that keeps them. */
#ifndef DBTAP_DROPSTATS_BPF_H
#define DBTAP_DROPSTATS_BPF_H

/* Declares the map `stats` of n counters and stat_inc(i), which adds one to counter i. */
#define DBTAP_STATS_MAP(n)                                           \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);             \
		__uint(max_entries, n);                              \
		__type(key, __u32);                                  \
		__type(value, __u64);                                \
	} stats SEC(".maps");                                        \
	static __always_inline void stat_inc(__u32 i)                \
	{                                                            \
		__u64 *v = bpf_map_lookup_elem(&stats, &i);          \
		if (v)                                               \
			(*v)++;                                      \
	}

#endif
