// SPDX-License-Identifier: GPL-2.0
/* Runs at each hardware breakpoint hit: counts per process, optionally streams the value. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/filter.bpf.h"
#include "bpf/watch.h"

const volatile __u32 want_events = 0;
/* Set after load (watch_probe_attach): the program is loaded before the ELF is read. */
__u64 watch_addr = 0;
__u32 watch_len = 0;

/*
 * Per-process counts of live writers: user space moves exited processes' counts out
 * every 100 ms, so 4096 covers any max_connections in practice; beyond it writes are
 * still counted (unrecorded), only not attributed. Small maps also load faster.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/*
 * The process title at a process's first hit: a backend that wrote once and exited
 * before user space looked at /proc still gets its type.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct watch_title);
} titles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

__u64 dropped = 0;   /* events the ring buffer had no room for */
__u64 ignored = 0;   /* hits of processes outside the target */
__u64 unrecorded = 0; /* hits of a new process when the counts map was full */

static __always_inline void read_value(__u64 *v)
{
	const void *p = (const void *)watch_addr;

	/* Constant sizes for the verifier; the value is little-endian in the low bytes. */
	if (watch_len == 8)
		bpf_probe_read_user(v, 8, p);
	else if (watch_len == 4)
		bpf_probe_read_user(v, 4, p);
	else if (watch_len == 2)
		bpf_probe_read_user(v, 2, p);
	else
		bpf_probe_read_user(v, 1, p);
}

static __always_inline void save_title(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	const void *arg = (const void *)BPF_CORE_READ(task, mm, arg_start);
	static const struct watch_title zero;

	if (bpf_map_update_elem(&titles, &tgid, &zero, BPF_NOEXIST))
		return;
	struct watch_title *t = bpf_map_lookup_elem(&titles, &tgid);
	if (!t)
		return;
	if (!arg || bpf_probe_read_user_str(t->title, sizeof(t->title), arg) < 0)
		bpf_get_current_comm(t->title, sizeof(t->title));
}

SEC("perf_event")
int on_hit(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u64 one = 1, *c;

	if (!filter_match()) {
		__sync_fetch_and_add(&ignored, 1);
		return 0;
	}
	c = bpf_map_lookup_elem(&counts, &tgid);
	if (!c) {
		/* Two CPUs may race to create the entry: NOEXIST, then add to the winner's. */
		if (bpf_map_update_elem(&counts, &tgid, &one, BPF_NOEXIST) == 0) {
			save_title(tgid);
			goto counted;
		}
		c = bpf_map_lookup_elem(&counts, &tgid);
		if (!c) {
			__sync_fetch_and_add(&unrecorded, 1);
			goto counted;
		}
	}
	__sync_fetch_and_add(c, 1);
counted:
	if (!want_events)
		return 0;
	struct watch_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = (__u32)id;
	e->ip = PT_REGS_IP((struct pt_regs *)&ctx->regs);
	e->value = 0;
	read_value(&e->value);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
