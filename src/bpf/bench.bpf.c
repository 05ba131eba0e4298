/* dbtap bench: the counting handler and the empty program it is judged against. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* The maps libbpf needs to attach a program to a USDT site. */
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

/*
 * One slot per CPU, each on its own cache line: no line bounces between CPUs, and no
 * map lookup call (the CPU id helper is inlined). The add is atomic because uprobe
 * programs run with migration, not preemption, disabled (two threads on one CPU could
 * otherwise lose an increment, and the count must equal the workload's); it also
 * makes folding CPU ids beyond BENCH_SLOTS onto shared slots safe.
 */
#define BENCH_SLOTS 256
#define BENCH_STRIDE 8 /* u64s per 64-byte cache line */

__u64 hits[BENCH_SLOTS * BENCH_STRIDE];

static __always_inline void count_hit(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	__sync_fetch_and_add(&hits[(cpu & (BENCH_SLOTS - 1)) * BENCH_STRIDE], 1);
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

/*
 * USDT sites: libbpf attaches them through multi-uprobe links where the kernel has
 * them, which only take programs loaded for that link type.
 */
SEC("usdt")
int bench_count_usdt(void *ctx)
{
	count_hit();
	return 0;
}

SEC("usdt")
int bench_empty_usdt(void *ctx)
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
