/* latency: START -> END per thread (USDT, uprobe, uretprobe), histograms in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/filter.bpf.h"
#include "bpf/latency.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 disp_kind = DISP_LOG2;
const volatile __u64 disp_min = 0;
const volatile __u64 disp_step = 1;
const volatile __u32 disp_n = 0;
const volatile __u64 disp_div = 1000;

/*
 * START times keyed by (thread, pair). A START overwrites the previous one of its
 * thread: a START whose END never comes (a statement that errors) is replaced by the
 * next, so it neither leaks nor pairs with a later END. LRU bounds what exited
 * threads leave behind.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct lat_key);
	__type(value, __u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAT_MAX_PAIRS);
	__type(key, __u32);
	__type(value, struct lat_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lat_key);
	__type(value, struct lat_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

static __always_inline void on_start(__u64 cookie)
{
	struct lat_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .pair = (__u32)cookie };
	__u64 now;

	if (!filter_match())
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&starts, &k, &now, BPF_ANY);
}

/* Returns the duration, 0 when there was no START (or the filter says no). */
static __always_inline __u64 on_end(__u64 cookie)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lat_key k = { .tid = (__u32)id, .pair = (__u32)cookie };
	struct lat_hist *h;
	struct lat_thread *th;
	__u64 *t0, d;
	__u32 idx;

	if (!filter_match())
		return 0;
	h = bpf_map_lookup_elem(&hists, &k.pair);
	if (!h)
		return 0;
	t0 = bpf_map_lookup_elem(&starts, &k);
	if (!t0) {
		h->unmatched++;
		return 0;
	}
	d = bpf_ktime_get_ns() - *t0;
	bpf_map_delete_elem(&starts, &k);
	h->count++;
	h->sum_ns += d;
	idx = loglinear_index(d);
	if (idx < LL_BUCKETS)
		h->ll[idx]++;
	idx = disp_slot(disp_kind, d / disp_div, disp_min, disp_step, disp_n);
	if (idx < DISP_SLOTS)
		h->disp[idx]++;

	th = bpf_map_lookup_elem(&threads, &k);
	if (!th) {
		struct lat_thread zero = { .tgid = id >> 32 };
		bpf_map_update_elem(&threads, &k, &zero, BPF_NOEXIST);
		th = bpf_map_lookup_elem(&threads, &k);
	}
	if (th) {
		th->count++;
		th->sum_ns += d;
	}
	return d ? d : 1;
}

SEC("uprobe")
int start_uprobe(struct pt_regs *ctx)
{
	on_start(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("usdt")
int BPF_USDT(start_usdt)
{
	on_start(bpf_usdt_cookie(ctx));
	return 0;
}

SEC("uprobe")
int end_uprobe(struct pt_regs *ctx)
{
	on_end(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("usdt")
int BPF_USDT(end_usdt)
{
	on_end(bpf_usdt_cookie(ctx));
	return 0;
}

/* query__done(const char *query): the pair's END, plus the statement for the top list. */
SEC("usdt")
int BPF_USDT(query_done, const char *query)
{
	__u64 cookie = bpf_usdt_cookie(ctx), d = on_end(cookie), id;
	struct lat_query_event *e;

	if (!d)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 pair = (__u32)cookie;
		struct lat_hist *h = bpf_map_lookup_elem(&hists, &pair);
		if (h)
			h->dropped++;
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->dur_ns = d;
	if (bpf_probe_read_user_str(e->text, sizeof(e->text), query) < 0)
		e->text[0] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}
