/* dbtap bench: the counting handler and the empty program it is judged against. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* Only for the maps libbpf needs to attach any program to a USDT site. */
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

/*
 * A per-CPU slot: no cache line bounces between CPUs. The add is atomic because
 * uprobe programs run with migration, not preemption, disabled: two threads on one
 * CPU could otherwise lose an increment, and the count must equal the workload's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void count_hit(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &zero);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* uprobes, uretprobes and USDT sites (all kprobe-type programs). */
SEC("uprobe")
int bench_count(void *ctx)
{
	count_hit();
	return 0;
}

SEC("uprobe")
int bench_empty(void *ctx)
{
	return 0;
}

/* Hardware breakpoints (perf events). */
SEC("perf_event")
int bench_count_perf(void *ctx)
{
	count_hit();
	return 0;
}

SEC("perf_event")
int bench_empty_perf(void *ctx)
{
	return 0;
}
