/* latency: START -> END per thread (USDT, uprobe, uretprobe), histograms in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/filter.bpf.h"
#include "bpf/histrec.bpf.h"
#include "bpf/slothist.bpf.h"
#include "bpf/latency.h"
#include "bpf/stmthash.bpf.h"
#include "bpf/bestatus.bpf.h"
#include "bpf/waitword.bpf.h" /* task_traced(): which thread is traced, one bit a thread */

char LICENSE[] SEC("license") = "GPL";

/* --raw-query: statements keyed by their exact text, so each literal is its own entry */
const volatile bool raw_text = false;
/* serve reads no per-thread figures: off, each END costs one LRU map lookup less */
const volatile bool per_thread = true;
/*
 * Statement keys eight bytes a bpf_loop() step (the PgBackendStatus path, where the hash
 * runs in the scheduler's path), else a byte a step: read only, so the verifier checks
 * the one hash a load uses, not both.
 */
const volatile bool stmt_wide = false;

/*
 * START times keyed by (thread, pair), 0 once its END took it. A START overwrites the
 * previous one of its thread: a START whose END never comes (a statement that errors)
 * is replaced by the next, so it neither leaks nor pairs with a later END. The entry
 * stays between pairs and is written in place: an update and a delete at every pair
 * made the LRU allocate and free a node each time (most of start_multi's run time in a
 * backend). LRU bounds what exited threads leave behind.
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

/*
 * latency query: figures per statement key (stathash.h), one value per CPU so that
 * backends finishing the same statement on different CPUs share no cache line and
 * max_ns needs no compare-and-swap. A plain hash, not an LRU: a full map counts the
 * statement in `dropped` instead of silently evicting another statement's figures.
 * Allocated as statements appear. User space sets max_entries (1 unless query).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LAT_MAX_STMTS);
	__type(key, __u64);
	__type(value, struct lat_stmt);
} stmts SEC(".maps");

/* A sample text per statement key, inserted once, for user space to normalize. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LAT_MAX_STMTS);
	__type(key, __u64);
	__type(value, char[LAT_TEXT_LEN]);
} texts SEC(".maps");

/*
 * serve: each statement key's durations at the Prometheus bounds (slothist.h), one
 * value per CPU like stmts. User space gives a statement its own series only when it
 * has an entry here; it sizes the map (a few times --max-series).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct slot_hist);
} stmt_hists SEC(".maps");

/* The statement text is too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[LAT_TEXT_LEN]);
} scratch SEC(".maps");

static __always_inline void on_start(__u64 cookie)
{
	struct lat_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .pair = (__u32)cookie };
	__u64 now, *t0;

	if (!filter_match())
		return;
	now = bpf_ktime_get_ns();
	t0 = bpf_map_lookup_elem(&starts, &k);
	if (t0)
		*t0 = now;
	else
		bpf_map_update_elem(&starts, &k, &now, BPF_ANY);
}

/* One duration d of pair k.pair on thread k.tid (process tgid): the pair's and the thread's figures. */
static __always_inline void pair_record(struct lat_hist *h, struct lat_key *k, __u32 tgid, __u64 d)
{
	struct lat_thread *th;

	h->count++;
	h->sum_ns += d;
	hist_record(h->ll, h->disp, d);

	if (!per_thread)
		return;
	th = bpf_map_lookup_elem(&threads, k);
	if (!th) {
		struct lat_thread zero = { .tgid = tgid };
		bpf_map_update_elem(&threads, k, &zero, BPF_NOEXIST);
		th = bpf_map_lookup_elem(&threads, k);
	}
	if (th) {
		th->count++;
		th->sum_ns += d;
	}
}

/* Returns the duration, 0 when there was no START (or the filter says no). */
static __always_inline __u64 on_end(__u64 cookie)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lat_key k = { .tid = (__u32)id, .pair = (__u32)cookie };
	struct lat_hist *h;
	__u64 *t0, d;

	if (!filter_match())
		return 0;
	h = bpf_map_lookup_elem(&hists, &k.pair);
	if (!h)
		return 0;
	t0 = bpf_map_lookup_elem(&starts, &k);
	if (!t0 || !*t0) {
		h->unmatched++;
		return 0;
	}
	d = bpf_ktime_get_ns() - *t0;
	*t0 = 0;
	pair_record(h, &k, id >> 32, d);
	return d ? d : 1;
}


/* Argument-less probes (uprobes, uretprobes, USDT sites) through multi-uprobe links. */
SEC("uprobe.multi")
int start_multi(struct pt_regs *ctx)
{
	on_start(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uprobe.multi")
int end_multi(struct pt_regs *ctx)
{
	on_end(bpf_get_attach_cookie(ctx));
	return 0;
}

/* The same, one uprobe per site, where the kernel has no multi-uprobe links. */
SEC("uprobe")
int start_uprobe(struct pt_regs *ctx)
{
	on_start(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uprobe")
int end_uprobe(struct pt_regs *ctx)
{
	on_end(bpf_get_attach_cookie(ctx));
	return 0;
}

STMTHASH_DEFINE(lat_text_hash, LAT_TEXT_LEN)
/* the same keys eight bytes a step: for the statements read in the scheduler's path */
STMTHASH_DEFINE_FLAT(lat_text_hash_wide, LAT_TEXT_LEN)

static __always_inline void count_dropped(__u32 pair)
{
	struct lat_hist *h = bpf_map_lookup_elem(&hists, &pair);

	if (h)
		h->dropped++;
}

/*
 * The statement's figures under the hash of its text, the way stat --per query keys
 * statements: literal-blind, so the map holds one entry per statement shape and user
 * space merges what PostgreSQL's normalization makes equal. A global function, checked
 * by the verifier once and on its own: inlined, the text hash was checked again for
 * each range of d that query_done's paths gave it (serve's query_done: 7,528 verified
 * instructions).
 */
__noinline int stmt_record(__u64 query, __u64 d, __u32 pair)
{
	struct lat_stmt zero = {}, *st;
	__u32 z = 0;
	char *text;
	__u64 key;

	text = bpf_map_lookup_elem(&scratch, &z);
	if (!text)
		return 0;
	if (bpf_probe_read_user_str(text, LAT_TEXT_LEN, (const void *)query) < 0)
		text[0] = '\0';
	key = stmt_wide ? lat_text_hash_wide(text) : lat_text_hash(text, raw_text);

	st = bpf_map_lookup_elem(&stmts, &key);
	if (!st) {
		/* EEXIST when another CPU created it meanwhile: the lookup finds it then */
		bpf_map_update_elem(&stmts, &key, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&stmts, &key);
		if (!st) {
			count_dropped(pair);
			return 0;
		}
		/* only for keys in stmts, so texts cannot fill up before it */
		if (!bpf_map_lookup_elem(&texts, &key))
			bpf_map_update_elem(&texts, &key, text, BPF_NOEXIST);
	}
	st->count++;
	st->sum_ns += d;
	if (d > st->max_ns)
		st->max_ns = d;
	/* after stmts: a key user space finds here is in stmts too */
	if (slothist_on) {
		struct slot_hist *sh = slothist_get(&stmt_hists, &key, SLOTHIST_DROP_KEYED);

		if (sh)
			slothist_add(sh, d);
	}
	return 0;
}

/* query__done(const char *query): the pair's END, plus the statement's figures. */
SEC("usdt")
int BPF_USDT(query_done, const char *query)
{
	__u64 cookie = bpf_usdt_cookie(ctx), d = on_end(cookie);

	if (!d)
		return 0;
	if (slothist_on) {
		/* every statement in its backend's histogram, keyed or not */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		slothist_backend((__u32)bpf_get_current_pid_tgid(), BPF_CORE_READ(task, start_time), d);
	}
	stmt_record((__u64)query, d, (__u32)cookie);
	return 0;
}

/*
 * The PgBackendStatus path of latency query (bestatus.bpf.h): no trap at the
 * statements. Each traced backend thread's row is looked at when it leaves the CPU;
 * a statement that ended since the last look is counted with the duration PostgreSQL
 * itself gives it (state_change - query_start, microseconds). Keyed by thread id;
 * preallocated: written inside the scheduler.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LAT_MAX_BACKENDS);
	__type(key, __u32);
	__type(value, struct lat_be);
} backends SEC(".maps");

/*
 * Where each look comes from (look_mode): a socket read, the thread's exit, a switch-out.
 */
enum { LOOK_RECV, LOOK_EXIT, LOOK_SWITCH };

/* The PgBackendStatus path also looks at socket reads (sock_recv_length, Linux 6.4+). */
const volatile bool recv_looks = false;

/*
 * One bit per thread id (pid_max / 64 words, set before load): the thread's last look
 * was at a switch-out that found its row between statements, so its next socket read
 * is skipped. A backend waiting for its client looks at its switch-out, then reads the
 * next statement: nothing can have ended between the two, since a statement begins
 * only with a message read, and every message the backend had was read before it
 * waited (its buffer was empty, or it would not have waited). Only a client that
 * pipelines, whose next message was already in the buffer, can have a statement end
 * in between (a switch-out while idle that was no wait for it: a blocked send), and
 * that statement is still found by the next look unless another ends first
 * (docs/latency.md: the latest of those is counted); a look that finds the row inside
 * a statement clears the bit. Two looks a statement became one: a switch-out and a
 * read. Atomic: the threads sharing a word run on other CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} recvskip SEC(".maps");

static __always_inline __u64 *recvskip_word(__u32 tid, __u64 *bit)
{
	__u32 idx = tid / 64;

	*bit = 1ull << (tid % 64);
	return bpf_map_lookup_elem(&recvskip, &idx);
}

/*
 * Looks at the row of the current thread (id as bpf_get_current_pid_tgid() has it),
 * counting the statement that ended since the last look; mode: LOOK_*. A global
 * function: checked once, apart from the programs that call it.
 */
__noinline int be_look(__u64 id, __u64 mode)
{
	bool at_exit = mode == LOOK_EXIT;
	__u32 tid = (__u32)id, pair = 0;
	struct lat_key k = { .tid = tid, .pair = 0 };
	struct bestatus_end end = {};
	struct lat_hist *h = bpf_map_lookup_elem(&hists, &pair);
	struct lat_be *e;
	__u64 be, d;
	int r;

	if (!h)
		return 0;
	h->looks++;
	e = bpf_map_lookup_elem(&backends, &tid);
	if (!e) {
		struct lat_be zero = { .tgid = id >> 32 };

		bpf_map_update_elem(&backends, &tid, &zero, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&backends, &tid);
		if (!e) {
			h->untracked++;
			return 0;
		}
	}
	be = bestatus_row(&e->be);
	if (!be)
		return 0;
	r = bestatus_stmt_end(be, e->tgid, at_exit, &e->t, &end);
	if (recv_looks && r >= 0) {
		__u64 bit, *w = recvskip_word(tid, &bit);
		bool skip = mode == LOOK_SWITCH && !e->t.in_stmt;

		if (w && skip && !(*w & bit))
			__sync_fetch_and_or(w, bit);
		else if (w && !skip && e->t.in_stmt && (*w & bit))
			__sync_fetch_and_and(w, ~bit);
	}
	/*
	 * Transactions: a statement that ended with the row idle, outside a transaction
	 * block, ended its transaction (an implicit one, or the block its COMMIT ends);
	 * committed unless transaction__abort fired since the row was last idle (on_abort
	 * counted it then: a ROLLBACK, a statement that failed, a block that failed
	 * earlier). A row that changed to idle with no statement counted (one begun before
	 * dbtap attached) ends the abort's reach too.
	 */
	if (end.idle) {
		if (r == 1 && !end.failed && !e->aborted)
			h->commits++;
		e->aborted = 0;
	}
	if (r != 1 || end.failed)
		return 0;
	d = end.end_us > end.start_us ? (__u64)(end.end_us - end.start_us) * 1000 : 0;
	pair_record(h, &k, e->tgid, d);
	if (at_exit)
		h->at_exit++;
	if (slothist_on) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		slothist_backend(tid, BPF_CORE_READ(task, start_time), d);
	}
	stmt_record(end.text, d, 0);
	return 0;
}

/*
 * One program, stmt_look, looks at the row for the three tracepoints below, which
 * tail-call into it: each program verifies the global functions it calls on its own,
 * so three programs calling be_look() made the verifier check it, its statement hash
 * and its maps three times (4,600-4,800 instructions each, two thirds of the load).
 * The tracepoint's program says in look_mode, on its CPU, where the look comes from
 * (LOOK_*); nothing runs between that and the tail call on the same CPU (the
 * tracepoints run with preemption off and none of them fires in an interrupt).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} look_prog SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} look_mode SEC(".maps");

/*
 * Hands the look to stmt_look. The slot is empty only before user space fills it
 * (before attaching) and once dbtap let go of the map (after its last report).
 */
static __always_inline void look_call(void *ctx, __u32 how)
{
	__u32 z = 0, *mode = bpf_map_lookup_elem(&look_mode, &z);

	if (!mode)
		return;
	*mode = how;
	bpf_tail_call(ctx, &look_prog, 0);
}

/* Attached nowhere: the programs below tail-call into it (look_prog). */
SEC("raw_tp")
int stmt_look(void *ctx)
{
	__u32 z = 0, *mode = bpf_map_lookup_elem(&look_mode, &z);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (!mode)
		return 0;
	be_look(id, *mode);
	if (*mode == LOOK_EXIT)
		bpf_map_delete_elem(&backends, &tid);
	return 0;
}

/*
 * Every switch of the machine: prev, the thread leaving the CPU, is the current task
 * (its memory readable), and one bit says whether it is traced (waitword.bpf.h).
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(stmt_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 id = bpf_get_current_pid_tgid();
	bool dead = prev_state & TASK_DEAD_BIT;

	if (!task_traced(prev, (__u32)id, dead))
		return 0;
	if (dead) {
		/* its exit looked already (stmt_exit), with the memory still there */
		__u32 tid = (__u32)id;
		__u64 bit, *w = recvskip_word(tid, &bit);

		if (w && (*w & bit))
			__sync_fetch_and_and(w, ~bit);
		bpf_map_delete_elem(&backends, &tid);
		return 0;
	}
	/*
	 * Preempted (the kernel's involuntary switches), it runs again, and a statement
	 * it ended is seen at its next wait or socket read; without the reads a preemption
	 * may be the only look between two statements of a client that answers before the
	 * backend waits.
	 */
	if (recv_looks && preempt)
		return 0;
	look_call(ctx, LOOK_SWITCH);
	return 0;
}

/*
 * A backend's reads from its socket: a client that sends its next statement before the
 * backend waits for it (pgbench does, now and then, on two CPUs) gives no switch-out
 * between the two statements, but the read of the next one still comes after the row
 * said the last one ended (recv_traced(), waitword.bpf.h).
 */
SEC("raw_tp/sock_recv_length")
int BPF_PROG(stmt_recv, struct sock *sk, int ret, int flags)
{
	__u64 id;

	__u64 bit, *w;

	if (!recv_traced(ret, flags, &id))
		return 0;
	w = recvskip_word((__u32)id, &bit);
	if (w && (*w & bit)) {
		/* the switch-out before this read looked (recvskip) */
		__sync_fetch_and_and(w, ~bit);
		return 0;
	}
	look_call(ctx, LOOK_RECV);
	return 0;
}

/*
 * A backend that exits right after its last statement may never wait for its client
 * again (the client's Terminate was already in the socket): its last look is here,
 * and its entry goes with it.
 * sched_process_exit fires in do_exit() before the task's memory is released (Linux
 * 6.16 moved it there), while the exiting thread is still the current task.
 */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(stmt_exit)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!bpf_map_lookup_elem(&backends, &tid))
		return 0;
	look_call(ctx, LOOK_EXIT);
	return 0;
}

/*
 * transaction__abort: every aborted transaction of a backend the looks follow is
 * counted here (a trap, but only where a transaction aborts), and its end at the row's
 * next idle look is not a commit. With debug_query_string NULL it is PostgreSQL's
 * error recovery, the statement in progress failed (query__done does not fire for it
 * on the USDT path either).
 */
static __always_inline void on_abort(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), pair = 0;
	struct lat_hist *h;
	struct lat_be *e;
	__u64 be;

	if (!filter_match())
		return;
	e = bpf_map_lookup_elem(&backends, &tid);
	if (!e)
		return;
	h = bpf_map_lookup_elem(&hists, &pair);
	if (h)
		h->aborts++;
	e->aborted = 1;
	if (bestatus_query_set())
		return;
	be = bestatus_row(&e->be);
	if (be)
		bestatus_stmt_failed(be, &e->t);
}

SEC("uprobe.multi")
int abort_multi(struct pt_regs *ctx)
{
	on_abort();
	return 0;
}

SEC("uprobe")
int abort_uprobe(struct pt_regs *ctx)
{
	on_abort();
	return 0;
}
