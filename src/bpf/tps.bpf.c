/* tps: transaction__start/commit/abort per backend, times and histograms aggregated in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/filter.bpf.h"
#include "bpf/histrec.bpf.h"
#include "bpf/slothist.bpf.h"
#include "bpf/tps.h"

char LICENSE[] SEC("license") = "GPL";


/*
 * Keyed by thread id. LRU: backends that exit leave their entry behind, and the oldest
 * go first when a busy server churns through more connections than the map holds.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct tps_backend);
} backends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tps_totals);
} totals SEC(".maps");

/*
 * The backend's entry, made when missing. A transaction start also checks the thread's
 * start time: pid_max wraps, and a thread id seen before may now be another backend.
 * Commits and aborts skip that check (a new backend's first event is a start).
 */
static __always_inline struct tps_backend *backend_get(__u32 tid, __u32 tgid, bool at_start)
{
	struct tps_backend *b = bpf_map_lookup_elem(&backends, &tid);
	__u64 born;

	if (b && !at_start)
		return b;
	/* a BTF pointer: a plain load, not a bpf_probe_read_kernel() call per transaction */
	born = bpf_get_current_task_btf()->start_time;
	if (b && b->born == born)
		return b;
	struct tps_backend zero = { .tgid = tgid, .born = born };
	bpf_map_update_elem(&backends, &tid, &zero, BPF_ANY);
	return bpf_map_lookup_elem(&backends, &tid);
}

static __always_inline void tx_start(void)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 zero = 0;
	struct tps_backend *b;
	struct tps_totals *t;

	if (!filter_match())
		return;
	now = bpf_ktime_get_ns();
	b = backend_get((__u32)id, id >> 32, true);
	t = bpf_map_lookup_elem(&totals, &zero);
	if (!b || !t)
		return;
	b->starts++;
	t->starts++;
	if (b->last_start) {
		__u64 c = now - b->last_start;
		b->cycles++;
		b->cycle_ns += c;
		t->cycles++;
		t->cycle_ns += c;
	}
	b->last_start = now;
	b->open_start = now;
	if (b->starts <= 2) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		unsigned long arg = BPF_CORE_READ(task, mm, arg_start);

		bpf_probe_read_user_str(b->title, sizeof(b->title), (void *)arg);
	}
	return;
}

static __always_inline void tx_end(bool commit)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 zero = 0;
	struct tps_backend *b;
	struct tps_totals *t;

	if (!filter_match())
		return;
	now = bpf_ktime_get_ns();
	b = backend_get((__u32)id, id >> 32, false);
	t = bpf_map_lookup_elem(&totals, &zero);
	if (!b || !t)
		return;
	if (commit) {
		b->commits++;
		t->commits++;
	} else {
		b->aborts++;
		t->aborts++;
	}
	/* A transaction that began before we attached has no start: counted, not timed. */
	if (!b->open_start)
		return;
	__u64 d = now - b->open_start;
	b->open_start = 0;
	b->timed++;
	b->txn_ns += d;
	t->txn_count++;
	t->txn_ns += d;
	hist_record(t->ll, t->disp, d);
	if (slothist_on)
		slothist_backend((__u32)id, b->born, d);
}

static __always_inline void tx_event(__u64 cookie)
{
	if (cookie == TPS_PROBE_START)
		tx_start();
	else
		tx_end(cookie == TPS_PROBE_COMMIT);
}

/* The three probes' sites through one multi-uprobe link, the cookie says which. */
SEC("uprobe.multi")
int tx_multi(struct pt_regs *ctx)
{
	tx_event(bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, one uprobe per site, where the kernel has no multi-uprobe links. */
SEC("uprobe")
int tx_uprobe(struct pt_regs *ctx)
{
	tx_event(bpf_get_attach_cookie(ctx));
	return 0;
}
