/* stat --per query|transaction: counter deltas per statement, read in the kernel at USDT probes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/filter.bpf.h"
#include "bpf/loglinear.h"
#include "bpf/stat.h"
#include "bpf/stmthash.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 nctr = 0;  /* counters per CPU in `counters` */
const volatile __u32 ncpus = 1; /* `counters` index: counter * ncpus + cpu */

/*
 * Per-CPU counters, one per event and CPU (perf's --bpf-counters layout): they count
 * whatever runs on the CPU, and the programs below attribute the part between a
 * backend's switch-in and switch-out to the statement it is running. A backend forked
 * after start needs nothing from user space, and the kernel keeps no per-task state.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");

/*
 * Statements in progress, by thread. A thread's entry stays between its statements
 * (`active` 0) and is rewritten in place: an update and a delete per statement made
 * the LRU allocate and free a node each time. LRU: a backend that exits leaves one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stat_run);
} runs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct stat_agg);
} aggs SEC(".maps");

/* A sample text per statement hash, for user space to normalize and print. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, char[STAT_TEXT_MAX]);
} texts SEC(".maps");

/*
 * Sparse log-linear histograms: one entry per (statement, figure, bucket) seen, a
 * thousand or so per statement with every figure. Allocated as used, not up front.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 262144);
	__type(key, struct stat_hkey);
	__type(value, __u64);
} hists SEC(".maps");

struct scratch {
	char text[STAT_TEXT_MAX];
	struct stat_run run;
	struct stat_agg agg;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stat_drops);
} drops SEC(".maps");

static __always_inline struct stat_drops *drops_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&drops, &zero);
}

/* Starts a segment: the counters' values as the thread gets (or has) the CPU. */
static __always_inline void seg_open(struct stat_run *r, __u32 cpu)
{
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++) {
		struct bpf_perf_event_value v = {};
		if (i >= nctr)
			break;
		if (bpf_perf_event_read_value(&counters, i * ncpus + cpu, &v, sizeof(v))) {
			struct stat_drops *d = drops_get();
			if (d)
				d->read_err++;
		}
		r->base[i] = v.counter;
		r->base_ena[i] = v.enabled;
		r->base_run[i] = v.running;
	}
	r->cpu = cpu;
	r->oncpu = 1;
	r->cpus |= 1ull << (cpu & 63);
}

/* Ends a segment: adds what the counters moved, scaled when they were multiplexed. */
static __always_inline void seg_close(struct stat_run *r, __u32 cpu)
{
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++) {
		struct bpf_perf_event_value v = {};
		__u64 d, de, dr;
		if (i >= nctr)
			break;
		if (bpf_perf_event_read_value(&counters, i * ncpus + cpu, &v, sizeof(v))) {
			struct stat_drops *dd = drops_get();
			if (dd)
				dd->read_err++;
			continue;
		}
		d = v.counter - r->base[i];
		de = v.enabled - r->base_ena[i];
		dr = v.running - r->base_run[i];
		if (!dr) {
			if (de)
				r->unscaled |= 1u << i;
			continue;
		}
		if (dr < de) {
			/* perf's scaling; divide first where the product could overflow */
			if (d >> 32 || de >> 32)
				d = d / dr * de;
			else
				d = d * de / dr;
		}
		r->acc[i] += d;
	}
	r->oncpu = 0;
}

STMTHASH_DEFINE(stat_text_hash, STAT_TEXT_MAX)

static __always_inline struct scratch *scratch_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&scratch, &zero);
}

/*
 * A statement's start in r. `active` goes last: at a switch before it, on_switch leaves
 * the entry alone, as it did when the entry was inserted whole.
 */
static __always_inline void run_init(struct stat_run *r, __u64 key)
{
	r->active = 0;
	r->key = key;
	r->start_ns = bpf_ktime_get_ns();
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++)
		r->acc[i] = 0;
	r->cs = 0;
	r->migrations = 0;
	r->unscaled = 0;
	seg_open(r, bpf_get_smp_processor_id());
	r->cpus = 1ull << (r->cpu & 63);
	r->active = 1;
}

/* Starts following a statement on the current thread. */
static __always_inline void run_start(struct scratch *s, __u64 key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);

	if (!r) {
		/* a zeroed entry (inactive), then filled in place: one copy of run_init */
		__builtin_memset(&s->run, 0, sizeof(s->run));
		bpf_map_update_elem(&runs, &tid, &s->run, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&runs, &tid);
		if (!r) {
			struct stat_drops *d = drops_get();
			if (d)
				d->runs_full++;
			return;
		}
	}
	run_init(r, key);
}

static __always_inline void hist_add(__u64 key, __u32 fig, __u64 v)
{
	struct stat_hkey hk = { .key = key, .fig = fig, .bucket = loglinear_index(v) };
	__u64 one = 1, *c = bpf_map_lookup_elem(&hists, &hk);

	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	if (bpf_map_update_elem(&hists, &hk, &one, BPF_NOEXIST)) {
		c = bpf_map_lookup_elem(&hists, &hk); /* another CPU created it meanwhile */
		if (c) {
			__sync_fetch_and_add(c, 1);
		} else {
			struct stat_drops *d = drops_get();
			if (d)
				d->hist_full++;
		}
	}
}

/* Ends the current thread's statement under key: adds it to the aggregates. */
static __always_inline void run_finish(__u64 key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);
	struct stat_agg *a;
	struct scratch *s;
	__u64 wall;

	if (!r || !r->active)
		return;
	if (r->oncpu)
		seg_close(r, bpf_get_smp_processor_id());
	if (!key)
		key = r->key;
	wall = bpf_ktime_get_ns() - r->start_ns;

	a = bpf_map_lookup_elem(&aggs, &key);
	if (!a) {
		s = scratch_get();
		if (!s)
			goto out;
		__builtin_memset(&s->agg, 0, sizeof(s->agg));
		bpf_map_update_elem(&aggs, &key, &s->agg, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&aggs, &key);
		if (!a) {
			struct stat_drops *d = drops_get();
			if (d)
				d->agg_full++;
			goto out;
		}
	}
	__sync_fetch_and_add(&a->calls, 1);
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++) {
		if (i >= nctr)
			break;
		if (r->unscaled & (1u << i)) {
			__sync_fetch_and_add(&a->unscaled[i], 1);
			continue;
		}
		__sync_fetch_and_add(&a->sum[i], r->acc[i]);
		hist_add(key, i, r->acc[i]);
	}
	__sync_fetch_and_add(&a->sum[STAT_FIG_WALL], wall);
	__sync_fetch_and_add(&a->sum[STAT_FIG_CS], r->cs);
	__sync_fetch_and_add(&a->sum[STAT_FIG_MIGR], r->migrations);
	__sync_fetch_and_or(&a->cpus, r->cpus);
	if (r->cpus & (r->cpus - 1))
		__sync_fetch_and_add(&a->multi_cpu, 1);
	hist_add(key, STAT_FIG_WALL, wall);
	hist_add(key, STAT_FIG_CS, r->cs);
	hist_add(key, STAT_FIG_MIGR, r->migrations);
out:
	r->active = 0;
	r->oncpu = 0;
}

SEC("usdt")
int BPF_USDT(query_start, const char *query)
{
	struct scratch *s;
	__u64 key;

	if (!filter_match())
		return 0;
	s = scratch_get();
	if (!s)
		return 0;
	if (bpf_probe_read_user_str(s->text, sizeof(s->text), query) < 0)
		s->text[0] = '\0';
	key = stat_text_hash(s->text, false);
	/* a lookup is lock-free; the update takes the bucket lock even when it fails */
	if (!bpf_map_lookup_elem(&texts, &key))
		bpf_map_update_elem(&texts, &key, s->text, BPF_NOEXIST);
	run_start(s, key);
	return 0;
}

static __always_inline void on_probe(__u64 cookie)
{
	struct scratch *s;

	if (!filter_match())
		return;
	switch (cookie) {
	case STAT_PROBE_QUERY_DONE:
		run_finish(0);
		break;
	case STAT_PROBE_TXN_START:
		s = scratch_get();
		if (s)
			run_start(s, 0);
		break;
	case STAT_PROBE_TXN_COMMIT:
		run_finish(STAT_KEY_COMMIT);
		break;
	case STAT_PROBE_TXN_ABORT:
		run_finish(STAT_KEY_ABORT);
		break;
	}
}

/* query__done and the transaction probes, through one multi-uprobe link. */
SEC("uprobe.multi")
int stat_multi(struct pt_regs *ctx)
{
	on_probe(bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, one uprobe per site, where the kernel has no multi-uprobe links. */
SEC("uprobe")
int stat_uprobe(struct pt_regs *ctx)
{
	on_probe(bpf_get_attach_cookie(ctx));
	return 0;
}

/*
 * The accounting that makes per-CPU counters per-statement: at each switch a followed
 * thread's segment is closed (switch-out) or opened (switch-in). The tracepoint fires
 * before the switch, on the CPU both threads share at that instant. A raw tracepoint,
 * not tp_btf: libbpf finds a tp_btf program's target in the kernel's full BTF, read
 * and parsed at every start (5.5 MB, twice over in memory); the two pids read through
 * CO-RE cost two small reads per switch instead.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 ptid = BPF_CORE_READ(prev, pid), ntid = BPF_CORE_READ(next, pid);
	struct stat_run *r;

	r = bpf_map_lookup_elem(&runs, &ptid);
	if (r && r->active && r->oncpu) {
		seg_close(r, cpu);
		r->cs++;
	}
	r = bpf_map_lookup_elem(&runs, &ntid);
	if (r && r->active && !r->oncpu) {
		if (r->cpu != cpu)
			r->migrations++;
		seg_open(r, cpu);
	}
	return 0;
}
