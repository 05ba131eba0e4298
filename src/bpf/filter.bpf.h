/* Which processes a BPF program counts: a cluster (postmaster + children) or a pid set. */
#ifndef DBTAP_BPF_FILTER_BPF_H
#define DBTAP_BPF_FILTER_BPF_H

/*
 * Set before load from target_filter_configure() (bpf/filter.h). A cluster is matched
 * through the parent, so backends forked after attach are counted without user-space
 * help, and a process of another cluster or program mapping the same address is not.
 */
const volatile __u32 filter_postmaster = 0; /* --pg: tgid of the postmaster */
const volatile __u32 filter_use_pids = 0;   /* -p/-t: look the tgid up in filter_pids */
const volatile __u32 filter_tid = 0;        /* -t: only this thread */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} filter_pids SEC(".maps");

static __always_inline bool filter_match(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;

	if (filter_tid)
		return tid == filter_tid;
	if (filter_postmaster) {
		if (tgid == filter_postmaster)
			return true;
#ifdef FILTER_PARENT_BY_COPY
		/*
		 * For a program whose every hit costs far more (one that takes stacks):
		 * two copies are nothing there, where the verifier checks the pointer
		 * loaded below by searching the kernel's whole BTF by name three times
		 * (1.5-5 ms of CPU at each load of each program).
		 */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		return BPF_CORE_READ(task, real_parent, tgid) == filter_postmaster;
#else
		/*
		 * A BTF pointer: two plain loads the JIT guards, where BPF_CORE_READ made
		 * two bpf_probe_read_kernel() calls (a third of a minimal program's time
		 * in a backend, at every hit).
		 */
		struct task_struct *task = bpf_get_current_task_btf();
		return task->real_parent->tgid == filter_postmaster;
#endif
	}
	if (filter_use_pids)
		return bpf_map_lookup_elem(&filter_pids, &tgid) != NULL;
	return true;
}

#endif
