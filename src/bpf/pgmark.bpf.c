/* pgmark: PostgreSQL's transaction, statement and checkpoint probes as timed markers (ring buffer) and latency histograms. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/filter.bpf.h"
#include "bpf/pgmark.h"
#include "bpf/pgmarkhist.bpf.h"
#include "bpf/dropstats.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 want_records = 1;
/*
 * The transactions and statements are read at the switch-outs (pgmarksw.bpf.h): of the
 * transaction probes only transaction__abort is attached, rare, for what the rows
 * cannot say: that a transaction ended in an abort. It counts the abort and leaves the
 * thread's bit in `aborted` for the switch-out that sees the transaction end.
 */
const volatile __u32 switch_marks = 0;

/* A bit per thread id (pid_max / 64 words, set before load): aborted since its last look. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} aborted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} ring SEC(".maps");

/* When each thread's transaction and statement began; LRU: exited backends age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} txn_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} stmt_start SEC(".maps");

/* [0] transactions, [1] statements. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct pgmark_hist);
} hists SEC(".maps");

DBTAP_STATS_MAP(PGMARK_ST_MAX)

static __always_inline void hist_put(__u32 which, __u64 d)
{
	struct pgmark_hist *h = bpf_map_lookup_elem(&hists, &which);

	if (h)
		pgmark_hist_add(h, d);
}

/*
 * A thread's start time, written in place when the thread has its entry: an LRU
 * update of a key that is there takes a new node and frees the old one, at every
 * transaction and statement.
 */
static __always_inline void start_set(void *map, __u32 tid, __u64 now)
{
	__u64 *s = bpf_map_lookup_elem(map, &tid);

	if (s)
		*s = now;
	else
		bpf_map_update_elem(map, &tid, &now, BPF_ANY);
}

static __always_inline void emit(__u32 kind, __u64 id, __u64 now)
{
	struct pgmark_rec *r;

	if (!want_records)
		return;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		stat_inc(PGMARK_ST_RING_FULL);
		return;
	}
	r->kind = kind;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->len = 0;
	r->time_ns = now;
	bpf_ringbuf_submit(r, 0);
}

/* Every probe but query__start: the kind is the attach cookie. */
static __always_inline void on_mark(__u64 kind)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), *s;
	__u32 tid = (__u32)id;

	if (!filter_match())
		return;
	if (switch_marks && kind == PGMARK_TXN_ABORT) {
		__u32 idx = tid / 64;
		__u64 *w = bpf_map_lookup_elem(&aborted, &idx);
		stat_inc(PGMARK_ST_ABORTS);
		/* other threads' bits share the word: atomic */
		if (w)
			__sync_fetch_and_or(w, 1ull << (tid % 64));
		return;
	}
	switch (kind) {
	case PGMARK_TXN_START:
		start_set(&txn_start, tid, now);
		break;
	case PGMARK_TXN_COMMIT:
	case PGMARK_TXN_ABORT:
		stat_inc(kind == PGMARK_TXN_COMMIT ? PGMARK_ST_COMMITS : PGMARK_ST_ABORTS);
		s = bpf_map_lookup_elem(&txn_start, &tid);
		/* a transaction that began before the probes has no start: counted, not timed */
		if (s && *s) {
			hist_put(0, now - *s);
			*s = 0;
		}
		break;
	case PGMARK_QUERY_DONE:
		s = bpf_map_lookup_elem(&stmt_start, &tid);
		if (s && *s) {
			hist_put(1, now - *s);
			*s = 0;
		}
		break;
	}
	emit(kind, id, now);
}

/* Argument-less probes through one multi-uprobe link, the cookie says which. */
SEC("uprobe.multi")
int mark_multi(struct pt_regs *ctx)
{
	on_mark(bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, one uprobe per site, where the kernel has no multi-uprobe links. */
SEC("uprobe")
int mark_uprobe(struct pt_regs *ctx)
{
	on_mark(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("usdt")
int BPF_USDT(query_start, const char *query)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct pgmark_text_rec *r;
	long n;

	if (!filter_match())
		return 0;
	start_set(&stmt_start, tid, now);
	if (!want_records)
		return 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		stat_inc(PGMARK_ST_RING_FULL);
		return 0;
	}
	n = bpf_probe_read_user_str(r->text, sizeof(r->text), query);
	r->h.kind = PGMARK_QUERY_START;
	r->h.pid = id >> 32;
	r->h.tid = tid;
	r->h.len = n > 0 ? n : 0;
	r->h.time_ns = now;
	bpf_ringbuf_submit(r, 0);
	return 0;
}
