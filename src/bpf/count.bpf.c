/* count: hits per probe (uprobes and USDT sites, the attach cookie says which), per process if asked. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/filter.bpf.h"
#include "bpf/count.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 by_pid = 0;

/*
 * Hits per probe; with --by, only the hits no pid_hits entry could take (the map full).
 * Every hit lands in exactly one of the two maps, so user space derives a probe's total
 * from the same reads as its split and the two always agree.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

/*
 * A plain hash, not an LRU: an evicted entry would take its hits with it, unseen.
 * Allocated as (process, probe) pairs appear: preallocating 65,536 entries took a few
 * ms of every start, and an entry that cannot be had is counted like a full map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, struct count_val);
} pid_hits SEC(".maps");

/* Zeroed template for new pid_hits entries (too big for the BPF stack with a title). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct count_val);
} scratch SEC(".maps");

static __always_inline void hit(__u64 cookie)
{
	__u32 idx = (__u32)cookie;
	__u64 *v;

	if (!filter_match())
		return;
	if (by_pid) {
		struct count_key k = { .probe = idx, .pid = bpf_get_current_pid_tgid() >> 32 };
		struct count_val *cv = bpf_map_lookup_elem(&pid_hits, &k);

		if (!cv) {
			/* First hit of this process: keep its title, it may exit before we look. */
			__u32 zero = 0;
			struct count_val *tmp = bpf_map_lookup_elem(&scratch, &zero);
			struct task_struct *task = (struct task_struct *)bpf_get_current_task();
			unsigned long arg = BPF_CORE_READ(task, mm, arg_start);

			if (!tmp)
				goto unattributed;
			tmp->hits = 0;
			if (bpf_probe_read_user_str(tmp->title, sizeof(tmp->title), (void *)arg) < 0)
				tmp->title[0] = '\0';
			bpf_map_update_elem(&pid_hits, &k, tmp, BPF_NOEXIST);
			cv = bpf_map_lookup_elem(&pid_hits, &k);
		}
		if (cv) {
			__sync_fetch_and_add(&cv->hits, 1);
			return;
		}
	}
unattributed:
	v = bpf_map_lookup_elem(&hits, &idx);
	if (v)
		(*v)++;
}

/* Every site of every probe through multi-uprobe links: USDT sites are uprobes too. */
SEC("uprobe.multi")
int count_multi(struct pt_regs *ctx)
{
	hit(bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, one uprobe per site, where the kernel has no multi-uprobe links. */
SEC("uprobe")
int count_uprobe(struct pt_regs *ctx)
{
	hit(bpf_get_attach_cookie(ctx));
	return 0;
}

/*
 * bench/overhead.sh: an empty program at the same sites (count --empty-program), the
 * floor of any probe there: the trap and the kernel's uprobe path in a real backend.
 */
SEC("uprobe.multi")
int empty_multi(struct pt_regs *ctx)
{
	return 0;
}

SEC("uprobe")
int empty_uprobe(struct pt_regs *ctx)
{
	return 0;
}
