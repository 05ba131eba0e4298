/* stat --by query|transaction: counter deltas per statement, split at sched_switch, bounded by PgBackendStatus or USDT probes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/bestatus.bpf.h"
#include "bpf/filter.bpf.h"
#include "bpf/loglinear.h"
#include "bpf/stat.h"
#include "bpf/stmthash.bpf.h"
#include "bpf/waitword.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 nctr = 0;  /* counters per CPU in `counters` */
const volatile __u32 ncpus = 1; /* `counters` index: counter * ncpus + cpu */
/*
 * Counter slots that are the clock (task-clock, cpu-clock), a bit each: a per-CPU clock
 * event counts the time its CPU runs, so a segment's share of it is the time from its
 * start to its end, read here with bpf_ktime_get_ns() instead of a perf event read
 * (100-250 ns cold, at every switch-in and switch-out). No perf event is opened for them.
 */
const volatile __u32 clock_slots = 0;
const volatile bool self_time = false; /* DBTAP_STAT_SELF_TIME (stat.h: STAT_ST_*) */

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

/*
 * What a look at a backend's row is handed by the program that tail-calls be_look
 * (below): the same CPU, in the same run of the tracepoint.
 */
struct look_args {
	__u32 recv;   /* at a socket read; a switch-out otherwise */
	__u32 based;  /* false at the thread's first sight, a stretch not seen from its start */
	__u32 asleep; /* the switch-out is to wait (not preempted) */
	__u64 t0;     /* self_time: the clock as the run began */
};

struct scratch {
	char text[STAT_TEXT_MAX];
	struct stat_run run;
	struct stat_agg agg;
	struct look_args look;
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_ST_N);
	__type(key, __u32);
	__type(value, struct stat_self);
} selftime SEC(".maps");

/* The clock where self_time is on, 0 otherwise. */
static __always_inline __u64 st_now(void)
{
	return self_time ? bpf_ktime_get_ns() : 0;
}

/* Part k ran from t0 (st_now()) to now. */
static __always_inline void st_add(__u32 k, __u64 t0)
{
	struct stat_self *p;

	if (!self_time || !(p = bpf_map_lookup_elem(&selftime, &k)))
		return;
	p->ns += bpf_ktime_get_ns() - t0;
	p->runs++;
}

/* Counter i on CPU cpu into v, now the clock's reading (clock_slots). 0 or an error. */
static __always_inline long ctr_read(__u32 i, __u32 cpu, __u64 now, struct bpf_perf_event_value *v)
{
	if (clock_slots & (1u << i)) {
		v->counter = v->enabled = v->running = now;
		return 0;
	}
	return bpf_perf_event_read_value(&counters, i * ncpus + cpu, v, sizeof(*v));
}

/* Starts a segment: the counters' values as the thread gets (or has) the CPU. */
static __always_inline void seg_open(struct stat_run *r, __u32 cpu)
{
	__u64 now = clock_slots ? bpf_ktime_get_ns() : 0;

	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++) {
		struct bpf_perf_event_value v = {};
		if (i >= nctr)
			break;
		if (ctr_read(i, cpu, now, &v)) {
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
}

/*
 * Ends a segment: what the counters moved since seg_open() into d, scaled when they were
 * multiplexed; a counter that was never on the hardware meanwhile gets its bit in
 * *unscaled.
 */
static __always_inline void seg_delta(struct stat_run *r, __u32 cpu, __u64 *d, __u32 *unscaled,
				      bool rebase)
{
	__u64 now = clock_slots ? bpf_ktime_get_ns() : 0;

	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++) {
		struct bpf_perf_event_value v = {};
		__u64 x, de, dr;
		d[i] = 0;
		if (i >= nctr)
			break;
		if (ctr_read(i, cpu, now, &v)) {
			struct stat_drops *dd = drops_get();
			if (dd)
				dd->read_err++;
			continue;
		}
		x = v.counter - r->base[i];
		de = v.enabled - r->base_ena[i];
		dr = v.running - r->base_run[i];
		if (rebase) {
			/* the next segment starts here, with the same reading */
			r->base[i] = v.counter;
			r->base_ena[i] = v.enabled;
			r->base_run[i] = v.running;
		}
		if (!dr) {
			if (de)
				*unscaled |= 1u << i;
			continue;
		}
		if (dr < de) {
			/* perf's scaling; divide first where the product could overflow */
			if (x >> 32 || de >> 32)
				x = x / dr * de;
			else
				x = x * de / dr;
		}
		d[i] = x;
	}
	if (!rebase)
		r->oncpu = 0;
}

/* Ends a segment of the statement in r: adds what the counters moved. */
static __always_inline void seg_close(struct stat_run *r, __u32 cpu)
{
	__u64 d[STAT_MAX_EVENTS] = {};
	__u32 unscaled = 0;

	seg_delta(r, cpu, d, &unscaled, false);
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++)
		r->acc[i] += d[i];
	r->unscaled |= unscaled;
}

STMTHASH_DEFINE(stat_text_hash, STAT_TEXT_MAX)
/* in the scheduler's path (the PgBackendStatus path): eight bytes a step, walked once */
STMTHASH_DEFINE_FLAT(stat_text_hash_wide, STAT_TEXT_MAX)

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

/* A thread's entry before anything is known of it: zero, inactive. */
static const struct stat_run run_zero;

/*
 * The entry of thread tid, created (run_zero) when it has none: the one place both
 * paths make one. NULL when the map is full, counted.
 */
static __always_inline struct stat_run *run_new(__u32 tid)
{
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);

	if (r)
		return r;
	bpf_map_update_elem(&runs, &tid, &run_zero, BPF_NOEXIST);
	r = bpf_map_lookup_elem(&runs, &tid);
	if (!r) {
		struct stat_drops *d = drops_get();
		if (d)
			d->runs_full++;
	}
	return r;
}

/* Starts following a statement on the current thread. */
static __always_inline void run_start(__u64 key)
{
	struct stat_run *r = run_new((__u32)bpf_get_current_pid_tgid());

	if (r)
		run_init(r, key); /* filled in place */
}

/*
 * A figure's sample v into its histogram. A zero is not stored: user space makes
 * bucket 0 from the calls the aggregate counted (stat.c), and the most common values
 * of three figures (context switches, migrations, page faults) cost no lookup.
 */
__noinline int hist_add(__u64 key, __u32 fig, __u64 v)
{
	struct stat_hkey hk = { .key = key, .fig = fig, .bucket = loglinear_index(v) };
	__u64 one = 1, *c;

	if (!v)
		return 0;
	c = bpf_map_lookup_elem(&hists, &hk);

	if (c) {
		__sync_fetch_and_add(c, 1);
		return 1;
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
	return 1;
}

/* Adds the statement (or transaction) in r, of wall time wall ns, to key's aggregate. */
static __always_inline void stmt_emit(struct stat_run *r, __u64 key, __u64 wall)
{
	struct stat_agg *a = bpf_map_lookup_elem(&aggs, &key);
	struct scratch *s;

	if (!a) {
		s = scratch_get();
		if (!s)
			return;
		__builtin_memset(&s->agg, 0, sizeof(s->agg));
		bpf_map_update_elem(&aggs, &key, &s->agg, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&aggs, &key);
		if (!a) {
			struct stat_drops *d = drops_get();
			if (d)
				d->agg_full++;
			return;
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
}

/* Ends the current thread's statement under key: adds it to the aggregates. */
static __always_inline void run_finish(__u64 key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);

	if (!r || !r->active)
		return;
	if (r->oncpu)
		seg_close(r, bpf_get_smp_processor_id());
	stmt_emit(r, key ? key : r->key, bpf_ktime_get_ns() - r->start_ns);
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
	run_start(key);
	return 0;
}

static __always_inline void on_probe(__u64 cookie)
{
	if (!filter_match())
		return;
	switch (cookie) {
	case STAT_PROBE_QUERY_DONE:
		run_finish(0);
		break;
	case STAT_PROBE_TXN_START:
		run_start(0);
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
		r->cpus |= 1ull << (cpu & 63);
	}
	return 0;
}

/*
 * The PgBackendStatus path: no trap in the backend. A backend's statements are
 * bracketed by its own switches (it blocks reading from its client between two) and by
 * its reads from its socket, and at each of these its row (MyBEEntry; the backend is
 * the current task, its memory readable) tells which statement the CPU stretch now
 * ending belongs to: st_activity_start_timestamp names the statement (each gets its
 * own, on PostgreSQL's clock), st_state says whether it still runs or has finished, and
 * then st_state_start_timestamp is when. The stretch's counter deltas go to that
 * statement, which is counted once, when it is seen finished. Each place closes the
 * stretch itself and tail-calls one program for the look (be_look): the verifier
 * checks the look, the text's hash and the aggregation once. The global functions
 * take scalars (a thread id to look the entry up by) or the entry.
 */

/*
 * The row's head and state for thread tgid: 0; 1 the backend was preempted inside a
 * write (the head may be half written); -1 not readable; -2 no row of its own: none
 * yet, or the slot still holds what the backend before left there (MyBEEntry is set
 * before the backend writes its pid into the row, with the rest), or it left it.
 */
static __always_inline int be_row_read(struct stat_run *r, __u32 tgid, struct bestatus_head *h,
				       __u32 *state, __u64 *text)
{
	__u64 be = bestatus_row(&r->be);
	int ret;

	if (!be)
		return -2;
	/* where the layout allows, the head, st_state and the text's address in one copy */
	if (bestatus_row_fits)
		ret = bestatus_row_read(be, h, state, text);
	else
		ret = bestatus_head_read(be, h);
	if (ret)
		return ret;
	if (h->procpid != (__s32)tgid)
		return -2;
	if (bestatus_row_fits)
		return 0;
	*text = 0; /* read when a new statement needs it */
	return bestatus_state_read(be, state);
}

/*
 * The key of the statement text in the row (st_activity_raw, at src when the row's read
 * gave it), its text kept once per key. The thread's last keys are remembered as having
 * their text: a backend runs few statement shapes over and over, and the lookup of one
 * already in `texts` costs 200-250 ns cold.
 */
static __always_inline __u64 be_text_key(struct stat_run *r, __u64 src)
{
	struct scratch *s = scratch_get();
	__u64 key;

	if (!s)
		return 0;
	if (!src)
		src = bestatus_text_addr(r->be);
	if (!src || bpf_probe_read_user_str(s->text, sizeof(s->text), (void *)src) < 0)
		s->text[0] = '\0';
	key = stat_text_hash_wide(s->text);
	for (__u32 i = 0; i < STAT_KNOWN; i++)
		if (r->known[i] == key)
			return key;
	if (!bpf_map_lookup_elem(&texts, &key) &&
	    bpf_map_update_elem(&texts, &key, s->text, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&texts, &key))
		return key; /* the map is full: not known, looked up again next time */
	r->known[r->known_next++ & (STAT_KNOWN - 1)] = key;
	return key;
}

/* Forgets what r holds of a statement: what runs next starts from nothing. */
static __always_inline void be_reset(struct stat_run *r)
{
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++)
		r->acc[i] = 0;
	r->unscaled = 0;
	r->cs = 0;
	r->migrations = 0;
	r->cpus = 0;
	r->stmt_ts = 0;
	r->active = 0;
}

/*
 * Counts the thread's open statement in r (its entry in runs), of wall time wall ns; it
 * ends there. The entry is passed, not looked up again: a global function takes a
 * pointer to memory of its argument's size, a map value among them.
 */
__noinline int be_emit(struct stat_run *r, __u64 wall)
{
	if (!r)
		return 0;
	__u64 t0 = st_now();

	stmt_emit(r, r->key, wall);
	st_add(STAT_ST_EMIT, t0);
	r->done_ts = r->stmt_ts;
	be_reset(r);
	return 1;
}

/*
 * How a look at the row ended (what stat_switch_out and stat_recv do next), and
 * BE_BETWEEN when the row said the backend is between statements.
 */
enum { BE_NOBODY, BE_RUNS, BE_ENDED, BE_UNDECIDED, BE_HOW = 3, BE_BETWEEN = 4 };

/*
 * The stretch of the thread of entry r (process tgid) on CPU cpu now ends, its counter
 * deltas in the CPU's scratch slot: whose is it? Adds it to the statement the row names,
 * counts that statement when it has finished. based: false at the thread's first
 * sight, a stretch not seen from its start. Returns BE_*.
 */
static __always_inline int be_decide(struct stat_run *r, __u32 tgid, __u32 cpu, __u32 based)
{
	struct scratch *sc = scratch_get();
	struct bestatus_head h = {};
	struct stat_drops *dr;
	__u32 state = 0;
	__u64 text = 0;
	__s64 ts;
	int rd;

	if (!r || !sc)
		return BE_NOBODY;
	__u64 t0 = st_now();
	rd = be_row_read(r, tgid, &h, &state, &text);
	st_add(STAT_ST_ROW, t0);
	if (rd == -2) {
		/* not its row (yet): the stretch is nobody's */
		be_reset(r);
		return BE_NOBODY;
	}
	if (rd == -1) {
		/*
		 * Not readable now (a page of the row not present in the backend's page
		 * tables at that instant): the stretch waits, with the open statement if
		 * any, for the next look.
		 */
		dr = drops_get();
		if (dr)
			dr->unreadable++;
		goto add;
	}
	ts = h.activity_start_us;
	if (!based || (ts && ts < bestatus_since_us && ts != r->stmt_ts)) {
		/*
		 * A stretch not seen from its start, or a statement that began before the
		 * program was attached: that statement is not counted (its start is where
		 * counting begins), and neither is the statement in r, if any (part of it
		 * is in the stretch).
		 */
		be_reset(r);
		r->done_ts = ts;
		return BE_NOBODY;
	}
	if (rd > 0)
		goto add; /* preempted while writing its row: decided at the next look */
	if (!ts || ts == r->done_ts) {
		/* between statements (a wakeup that ran none, the row not used yet) */
		be_reset(r);
		return BE_NOBODY | (bestatus_between(state) ? BE_BETWEEN : 0);
	}
	if (ts != r->stmt_ts) {
		if (r->stmt_ts) {
			/* no switch nor read between the open statement's end and this one */
			__s64 w = ts - r->stmt_ts;
			be_emit(r, w > 0 ? w * 1000 : 0);
			dr = drops_get();
			if (dr)
				dr->unseparated++;
		}
		__u64 t1 = st_now();
		r->key = be_text_key(r, text);
		st_add(STAT_ST_TEXT, t1);
		r->stmt_ts = ts;
		r->active = 1;
	}
add:
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++)
		r->acc[i] += sc->run.acc[i];
	r->unscaled |= sc->run.unscaled;
	r->migrations += r->stretch_migr;
	r->stretch_migr = 0;
	r->cpus |= 1ull << (cpu & 63);
	if (rd)
		return BE_UNDECIDED;
	if (!bestatus_between(state))
		return BE_RUNS;
	{
		__s64 w = h.state_start_us - ts;
		be_emit(r, w > 0 ? w * 1000 : 0);
	}
	return BE_ENDED | BE_BETWEEN;
}

/*
 * Where the stretch in progress on each CPU began: the counters as the traced thread
 * `key` was switched in (`oncpu` 1 until its switch-out). A thread switched in on a CPU
 * leaves it there, so its switch-out (or a socket read in between) finds the base in
 * its CPU's slot, and a switch-in costs no look-up of the thread's entry.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stat_run);
} cpuseg SEC(".maps");

static __always_inline struct stat_run *cpuseg_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpuseg, &zero);
}

/*
 * Thread tid's stretch so far on CPU cpu into the scratch slot: the deltas be_decide()
 * adds, the segment closed (or, rebase, a new one begun). A stretch whose switch-in was
 * not seen adds nothing, and is counted where the thread was known (not at the first
 * sight of a thread running at the attach); a read opens a segment in it.
 */
static __always_inline void be_stretch(struct stat_run *r, __u32 tid, __u32 cpu, bool rebase)
{
	struct scratch *sc = scratch_get();
	struct stat_run *c = cpuseg_get();

	if (!sc || !c)
		return;
	sc->run.unscaled = 0;
	if (c->oncpu && c->key == tid) {
		seg_delta(c, cpu, sc->run.acc, &sc->run.unscaled, rebase);
		return;
	}
	for (__u32 i = 0; i < STAT_MAX_EVENTS; i++)
		sc->run.acc[i] = 0;
	struct stat_drops *dr = drops_get();
	if (dr && r->be)
		dr->unpaired++;
	c->oncpu = 0;
	if (rebase) {
		c->key = tid;
		seg_open(c, cpu);
	}
}

/*
 * The look at a backend's row, one program for both places it is taken (a switch-out
 * and a socket read), which tail-call it once they have closed the stretch: the
 * verifier checks it, the text's hash and the aggregation once, not once in each
 * program. A program of its own is verified on its own, whatever calls it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} looks SEC(".maps");

/*
 * The current task's stretch ends, its deltas and look_args in the CPU's scratch slot
 * (the caller's, same CPU, same run). Not attached: reached through `looks` only.
 */
SEC("raw_tp")
int be_look(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, cpu = bpf_get_smp_processor_id();
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);
	struct scratch *sc = scratch_get();
	int how;

	if (!r || !sc)
		return 0;
	how = be_decide(r, id >> 32, cpu, sc->look.based);
	if (sc->look.recv) {
		st_add(STAT_ST_RECV, sc->look.t0);
		return 0;
	}
	if ((how & BE_HOW) == BE_RUNS)
		r->cs++; /* it leaves the CPU mid-statement */
	/*
	 * Asleep between statements: it waits for its client, and the first read once it
	 * is back is of the next statement. Not when it was preempted: that may be just
	 * after reading the next message, before the row says so.
	 */
	r->fresh = sc->look.asleep && (how & BE_BETWEEN) &&
		   ((how & BE_HOW) == BE_ENDED || (how & BE_HOW) == BE_NOBODY);
	st_add(STAT_ST_OUT, sc->look.t0);
	return 0;
}

/* What stat_switch_out() did: a look to take, the next thread's segment opened. */
enum { SW_LOOK = 1, SW_NEXT_OPEN = 2 };

/*
 * Thread tid (the current task) leaves CPU cpu; its last switch when dead; asleep when
 * it goes to wait (not preempted); next: the traced thread that takes the CPU, 0 none
 * (0 is the idle task's). Closes its stretch, and opens next's segment from the same
 * reading of the counters (the same instant): SW_* bits, SW_LOOK with the look's
 * arguments set.
 */
__noinline int stat_switch_out(__u32 tid, __u32 cpu, __u32 dead, __u32 asleep, __u32 next)
{
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);
	struct stat_run *c = cpuseg_get();
	struct scratch *sc = scratch_get();
	bool based = true; /* false: the first sight of a thread running at the attach */

	if (!c || !sc)
		return 0;
	if (dead) {
		/* its memory is gone: a statement not yet seen finished is not counted */
		if (r)
			bpf_map_delete_elem(&runs, &tid);
		c->oncpu = 0;
		return 0;
	}
	if (!r) {
		/* a thread forked since the attach had its switch-in seen */
		based = c->oncpu && c->key == tid;
		r = run_new(tid);
		if (!r) {
			c->oncpu = 0;
			return 0;
		}
		r->cpu = cpu;
	}
	be_stretch(r, tid, cpu, next != 0);
	r->stretch_migr = r->cpu != cpu;
	r->cpu = cpu;
	sc->look.recv = 0;
	sc->look.based = based;
	sc->look.asleep = asleep;
	if (!next)
		return SW_LOOK;
	c->key = next;
	return SW_LOOK | SW_NEXT_OPEN;
}

/*
 * Thread tid takes CPU cpu: a segment opens, whatever it is about to run. Global:
 * checked once, not once per way the dispatch before it went.
 */
__noinline int stat_switch_in(__u32 tid, __u32 cpu)
{
	struct stat_run *c = cpuseg_get();

	if (!c)
		return 0;
	c->key = tid;
	seg_open(c, cpu);
	return 0;
}

/*
 * Thread tid (the current task) read data from a socket: a backend reading its
 * client's next message, the previous statement over. Where the message was there
 * before the backend came to wait for it (a reply faster than the backend's way from
 * its answer to its next read), no switch separates the two statements: the read does.
 * The first read after a switch from between statements can hold nothing new (the
 * backend woke up for this message): it only clears the flag. 1 when the row must be
 * looked at (be_look), with the look's arguments set.
 */
__noinline int stat_recv(__u32 tid, __u32 cpu)
{
	struct stat_run *r = bpf_map_lookup_elem(&runs, &tid);
	struct scratch *sc = scratch_get();

	if (!r || !r->be || !sc)
		return 0;
	if (r->fresh) {
		r->fresh = 0;
		return 0;
	}
	be_stretch(r, tid, cpu, true);
	/* a move to this CPU goes with what the read ends, not again at the switch-out */
	r->stretch_migr = r->cpu != cpu;
	r->cpu = cpu;
	sc->look.recv = 1;
	sc->look.based = 1;
	sc->look.asleep = 0;
	return 1;
}

/* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE: prev_state of a task going to sleep */
#define TASK_REPORT_SLEEP 0x3

/*
 * The tracepoint fires on the CPU both threads share, before the switch: prev is
 * current. The switch-in goes before the look, which ends this run (a tail call does
 * not return): the look needs nothing of the CPU's slot once the stretch is closed.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch_be, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 t0 = st_now();
	struct switch_ends s;
	__u32 cpu;
	int how = 0;

	switch_ends_read(&s, prev, next, prev_state);
	if (!s.pt && !s.nt) {
		st_add(STAT_ST_UNTRACED, t0);
		return 0;
	}
	cpu = bpf_get_smp_processor_id();
	if (self_time) {
		struct scratch *sc = scratch_get();
		if (sc)
			sc->look.t0 = t0;
	}
	if (s.pt)
		how = stat_switch_out(s.ptid, cpu, s.dead,
				      !preempt && (prev_state & TASK_REPORT_SLEEP), s.nt ? s.ntid : 0);
	if (s.nt && !(how & SW_NEXT_OPEN)) {
		__u64 t1 = st_now();
		stat_switch_in(s.ntid, cpu);
		st_add(STAT_ST_IN, t1);
	}
	if (how & SW_LOOK)
		bpf_tail_call(ctx, &looks, 0); /* filled before attach: cannot miss */
	return 0;
}

/* A traced backend's socket read (recv_traced(), waitword.bpf.h). */
SEC("raw_tp/sock_recv_length")
int BPF_PROG(on_recv, struct sock *sk, int ret, int flags)
{
	__u64 t0 = st_now(), id;

	if (!recv_traced(ret, flags, &id))
		return 0;
	if (self_time) {
		struct scratch *sc = scratch_get();
		if (sc)
			sc->look.t0 = t0;
	}
	if (stat_recv((__u32)id, bpf_get_smp_processor_id()))
		bpf_tail_call(ctx, &looks, 0);
	st_add(STAT_ST_RECV_SKIP, t0);
	return 0;
}
