/* waitspan: each wait of a traced thread, from the switch-out that read its wait event to the switch-in that ends it, as a ring buffer record; and at the same switch-out, PostgreSQL's transactions and statements (pgmarksw.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/waitword.bpf.h"
#include "bpf/waitspan.h"
#include "bpf/dropstats.bpf.h"
#include "bpf/pgmarksw.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Not waits: Client:ClientRead is a backend between commands (the statement spans show
 * that gap), the Activity class the main loops of background processes with nothing to do.
 */
const volatile __u32 idle_event = 0;
const volatile __u32 idle_class = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} ring SEC(".maps");

/* Only threads off CPU in a wait, or just back from one: small, and emptied as they go on. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAITSPAN_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct waitspan_thread);
} threads SEC(".maps");

DBTAP_STATS_MAP(WAITSPAN_ST_MAX)

/*
 * Which thread ids have an entry in threads, a bit each (pid_max / 64 words, set before
 * load). Most switches of a traced backend are between statements, in Client:ClientRead,
 * with no entry before or after: the bit spares them both hash lookups. Only a thread's
 * own switches change its bit (its switch-in comes after its switch-out has ended), but
 * other threads' bits share the word: atomic.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} spanbits SEC(".maps");

static __always_inline __u64 *span_word(__u32 tid)
{
	__u32 idx = tid / 64;

	return bpf_map_lookup_elem(&spanbits, &idx);
}

/*
 * prev leaves the CPU (it is still the current task: its memory is readable). An
 * entry stays only while prev sleeps in a wait; a thread that leaves in another state
 * loses it, so the next wait in the same event is a new span, not a continuation.
 * Preempted with no wait event set (between two sleeps of one wait: a lock wait's
 * deadlock check runs on CPU) it keeps it: that is not a state the thread chose. A
 * preemption of a thread with no entry does not come here (the caller's): it begins
 * no wait, its wait starts where it sleeps. wptr: the wait event pointer
 * marks_switch_out() kept, 0 to read it.
 */
static __always_inline void switch_out(__u32 tid, __u32 tgid, bool dead, bool preempt,
				       __u64 wptr)
{
	__u64 *w = span_word(tid), bit = 1ull << (tid % 64);
	/* an id above the pid_max the bits were sized for: look it up */
	struct waitspan_thread *e = !w || (*w & bit) ? bpf_map_lookup_elem(&threads, &tid) : NULL;
	__u64 now;
	long ev;

	/* its last switch: a wait word still set is an exiting backend's, not a wait */
	ev = dead ? 0 : read_wait_event_at(wptr);
	if (ev <= 0 || (__u32)ev == idle_event || (idle_class && ((__u32)ev >> 24) == idle_class)) {
		if (e && !(preempt && ev == 0)) {
			bpf_map_delete_elem(&threads, &tid);
			if (w)
				__sync_fetch_and_and(w, ~bit);
		}
		return;
	}
	now = bpf_ktime_get_ns();
	if (e) {
		e->cont = e->event == (__u32)ev;
		e->event = ev;
		e->t0_ns = now;
		e->off = 1;
		return;
	}
	struct waitspan_thread t = { .t0_ns = now, .tgid = tgid, .event = ev, .off = 1 };
	if (bpf_map_update_elem(&threads, &tid, &t, BPF_ANY))
		stat_inc(WAITSPAN_ST_THREADS_FULL);
	else if (w)
		__sync_fetch_and_or(w, bit);
}

/* next runs again: its wait, if it was in one, is a stretch to hand on. */
static __always_inline void switch_in(__u32 tid)
{
	__u64 *w = span_word(tid);
	struct waitspan_thread *e;
	struct waitspan_rec *r;

	if (w && !(*w & (1ull << (tid % 64))))
		return;
	e = bpf_map_lookup_elem(&threads, &tid);
	if (!e || !e->off)
		return;
	e->off = 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		stat_inc(WAITSPAN_ST_RING_FULL);
		/* the next stretch of this wait must not join a span the reader never saw */
		e->event = 0;
		return;
	}
	r->pid = e->tgid;
	r->tid = tid;
	r->event = e->event;
	r->flags = e->cont ? WAITSPAN_CONT : 0;
	r->t0_ns = e->t0_ns;
	r->t1_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, 0);
	stat_inc(WAITSPAN_ST_SPANS);
}

/*
 * Untraced switches (most of the machine's) stop at the bitmap of waitword.bpf.h. A
 * raw tracepoint: prev is the current task (waitword.bpf.h says why, and what its
 * arguments are).
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(waitspan_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct switch_ends s;

	switch_ends_read(&s, prev, next, prev_state);
	/* the clock is read only for a wait: most traced switches are of idle backends */
	if (s.pt) {
		__u64 wptr = 0;
		/*
		 * A marker's end is anchored at this switch-out's clock: before the waits'
		 * work. At every switch-out, preemptions included: a backend preempted as it
		 * wakes its client may find the next statement there without waiting.
		 */
		if (bestatus_beentry_addr)
			wptr = marks_switch_out(s.id, s.dead);
		/*
		 * A preemption (taken off the CPU still runnable) of a thread in no wait
		 * (no entry: most are) reads nothing more: it begins no wait.
		 */
		__u64 *w = span_word(s.ptid);
		if (s.dead || !preempt || !w || (*w & (1ull << (s.ptid % 64))))
			switch_out(s.ptid, s.id >> 32, s.dead, preempt, wptr);
	}
	if (s.nt)
		switch_in(s.ntid);
	return 0;
}
