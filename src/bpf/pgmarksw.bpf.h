/* pgmarksw: PostgreSQL's transactions and statements read from a backend's own PgBackendStatus at its switch-out, with no trap: spans into pgmark's ring, latencies and counts into its maps. */
#ifndef DBTAP_BPF_PGMARKSW_BPF_H
#define DBTAP_BPF_PGMARKSW_BPF_H

#include "bpf/bestatus.bpf.h"
#include "bpf/pgmark.h"
#include "bpf/pgmarkhist.bpf.h"

/*
 * Where the rows are: bestatus.bpf.h's read-only data (BESTATUS_RODATA);
 * bestatus_beentry_addr 0: none of this runs (the markers come from pgmark's probes).
 * Spans through the ring (the timeline's), and statement spans among them:
 */
const volatile __u32 mk_records = 1, mk_statements = 1;

/*
 * pgmark's own maps, shared by file descriptor (pgmark_probe_fds()): the sizes here are
 * placeholders, the kernel's are those of pgmark's object.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} marks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct pgmark_hist);
} mark_hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PGMARK_ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mark_stats SEC(".maps");

/* pgmark's aborted bits: a thread id's bit set at its transaction__abort. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} mark_aborted SEC(".maps");

/* Each traced thread between its switch-outs; deleted at its last. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGMARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct pgmark_thread);
} mark_threads SEC(".maps");

static __always_inline void mark_stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&mark_stats, &i);

	if (v)
		(*v)++;
}

/*
 * PostgreSQL's timestamps are microseconds of its own clock (gettimeofday): the span's
 * length is theirs, exact; its place on CLOCK_MONOTONIC is its end anchored at now, the
 * switch-out right after the backend reported itself idle (the report, ReadyForQuery's
 * send and the read that finds nothing are all it runs in between, on CPU).
 */
static __always_inline __u64 span_ns(__s64 t0_us, __s64 t1_us)
{
	return t1_us > t0_us ? (__u64)(t1_us - t0_us) * 1000 : 0;
}

static __always_inline void mark_span(__u32 kind, __u32 which, __u64 id, __u64 now, __u64 d,
				      __u32 flags, __u64 raw)
{
	struct pgmark_hist *h = bpf_map_lookup_elem(&mark_hists, &which);
	struct pgmark_span_rec *r;

	if (h)
		pgmark_hist_add(h, d);
	if (!mk_records || (kind == PGMARK_STMT_SPAN && !mk_statements))
		return;
	if (kind == PGMARK_STMT_SPAN)
		r = bpf_ringbuf_reserve(&marks, sizeof(*r), 0);
	else
		r = bpf_ringbuf_reserve(&marks, PGMARK_SPAN_REC_NOTEXT, 0);
	if (!r) {
		mark_stat_inc(PGMARK_ST_RING_FULL);
		return;
	}
	r->h.kind = kind;
	r->h.pid = id >> 32;
	r->h.tid = (__u32)id;
	r->h.len = 0;
	r->h.time_ns = now;
	r->t0_ns = d < now ? now - d : 0;
	r->flags = flags;
	r->pad = 0;
	if (kind == PGMARK_STMT_SPAN) {
		long n = raw ? bpf_probe_read_user_str(r->text, sizeof(r->text), (void *)raw) : 0;
		if (n <= 0)
			r->text[0] = '\0';
		r->h.len = n > 0 ? n : 0;
	}
	bpf_ringbuf_submit(r, 0);
}

/* Whether the thread aborted a transaction since its last look (the bit is taken). */
static __always_inline bool abort_take(__u32 tid)
{
	__u32 idx = tid / 64;
	__u64 bit = 1ull << (tid % 64), *w = bpf_map_lookup_elem(&mark_aborted, &idx);

	if (!w || !(*w & bit))
		return false;
	__sync_fetch_and_and(w, ~bit);
	return true;
}

/*
 * A transaction ended: counted (an abort that the probe saw is counted there); timed
 * and drawn when its start was seen (xact_us).
 */
static __always_inline void mark_txn_end(__u64 id, __u64 now, __s64 xact_us, __s64 end_us,
					 bool aborted, bool probed, bool timed)
{
	if (!probed)
		mark_stat_inc(aborted ? PGMARK_ST_ABORTS : PGMARK_ST_COMMITS);
	if (timed)
		mark_span(PGMARK_TXN_SPAN, 0, id, now, span_ns(xact_us, end_us),
			  aborted ? PGMARK_ABORTED : 0, 0);
}

/*
 * The backend leaving the CPU (the current task: its memory is readable) as it shows
 * itself in its row. A statement has ended when the row says idle (or idle in
 * transaction) with a st_activity_start_timestamp not taken before: its span is from
 * there to st_state_start_timestamp, when the backend reported itself idle. A
 * transaction is open while st_xact_start_timestamp is set, and ends at a report of
 * idle; one the row never showed open (an autocommit statement, which reported no
 * switch while it ran) began with its statement: StartTransaction() takes the
 * statement's own start timestamp. Whether it aborted, the row does not say:
 * transaction__abort's bit does. What a thread shows the first time is a baseline.
 * Global: the verifier checks it once, apart from the waits' half. Returns the wait
 * event pointer to read the backend's wait event through (the one kept in its entry
 * while its row says it is its own), 0 to read it afresh.
 */
__noinline __u64 marks_switch_out(__u64 id, __u32 dead)
{
	__u32 tid = (__u32)id, tgid = id >> 32, st = 0, fl;
	struct pgmark_thread *e;
	struct bestatus_head h;
	__s64 xact, act, sst;
	bool took, ab, aborted;
	__u64 be, now;

	if (!bestatus_beentry_addr)
		return 0;
	e = bpf_map_lookup_elem(&mark_threads, &tid);
	if (dead) {
		if (e)
			bpf_map_delete_elem(&mark_threads, &tid);
		abort_take(tid); /* its id may be another thread's next */
		return 0;
	}
	if (!e) {
		struct pgmark_thread z = {};
		if (bpf_map_update_elem(&mark_threads, &tid, &z, BPF_NOEXIST)) {
			mark_stat_inc(PGMARK_ST_THREADS_FULL);
			return 0;
		}
		e = bpf_map_lookup_elem(&mark_threads, &tid);
		if (!e)
			return 0;
	}
	be = bestatus_row(&e->be);
	if (!be)
		return 0;
	/*
	 * Inside the backend's own write (odd change count: the next switch-out reads it
	 * whole), or a row not yet its own: a new backend points at its row before it
	 * writes it, which then holds the last owner's statement.
	 */
	__u64 text = 0;
	/* one copy of the row where its layout has the state and text there too (15, 16) */
	if ((bestatus_row_fits ? bestatus_row_read(be, &h, &st, &text) : bestatus_head_read(be, &h)) ||
	    h.procpid != (__s32)tgid || (!bestatus_row_fits && bestatus_state_read(be, &st)))
		return 0;
	/* the row is the backend's: its wait event pointer is its PGPROC's, kept */
	__u64 wptr = e->wptr;
	if (!wptr && !bpf_probe_read_user(&wptr, sizeof(wptr), (void *)wait_ptr_addr))
		e->wptr = wptr;
	if (!bestatus_between(st) && st != bestatus_st_running && st != bestatus_st_fastpath)
		return wptr; /* starting, or track_activities off: nothing to tell */
	/* the text buffer of the row is fixed for the server's life */
	if (!e->raw)
		e->raw = bestatus_row_fits ? text : bestatus_text_addr(be);
	xact = h.xact_start_us;
	act = h.activity_start_us;
	sst = h.state_start_us;
	fl = e->flags;
	/*
	 * A transaction block that failed (idle in transaction (aborted) without a
	 * transaction start: AbortTransaction() cleared it) ended there, as the abort probe
	 * says; the statements until its ROLLBACK make no transaction. A failed
	 * subtransaction leaves the start set: the transaction is still open.
	 */
	bool failed = st == bestatus_st_idle_xact_aborted && !xact;
	if (!(fl & PGMARK_TH_SEEN)) {
		abort_take(tid);
		e->act_ts = act;
		e->xact_ts = xact;
		e->flags = PGMARK_TH_SEEN | (xact ? PGMARK_TH_UNTIMED : 0) |
			   (failed ? PGMARK_TH_FAILED : 0);
		return wptr;
	}
	if (st == bestatus_st_running || st == bestatus_st_fastpath) {
		/* inside a statement: its transaction's start, for when it ends */
		if (xact && xact != e->xact_ts) {
			/* the one before ended between two switch-outs: counted, not timed */
			if (e->xact_ts) {
				ab = abort_take(tid);
				mark_txn_end(id, 0, 0, 0, ab || (fl & PGMARK_TH_ABORTED), ab, false);
			}
			e->xact_ts = xact;
			e->flags = PGMARK_TH_SEEN;
		}
		return wptr;
	}
	took = act && act != e->act_ts;
	ab = abort_take(tid);
	now = bpf_ktime_get_ns();
	if (took) {
		mark_span(PGMARK_STMT_SPAN, 1, id, now, span_ns(act, sst),
			  st == bestatus_st_idle_xact_aborted || ab ? PGMARK_ABORTED : 0, e->raw);
		e->act_ts = act;
	}
	if (failed) {
		if (!(fl & PGMARK_TH_FAILED))
			mark_txn_end(id, now, e->xact_ts, sst, true, ab,
				     e->xact_ts && !(fl & PGMARK_TH_UNTIMED));
		e->xact_ts = 0;
		e->flags = PGMARK_TH_SEEN | PGMARK_TH_FAILED;
		return wptr;
	}
	if (st != bestatus_st_idle) {
		/* idle in a transaction, or in one whose subtransaction failed */
		if (xact != e->xact_ts) {
			if (e->xact_ts)
				mark_txn_end(id, now, 0, 0, ab || (fl & PGMARK_TH_ABORTED), ab, false);
			e->xact_ts = xact;
			fl = PGMARK_TH_SEEN;
		}
		fl &= ~(PGMARK_TH_ABORTED | PGMARK_TH_FAILED);
		/* a COMMIT from here rolls back, a ROLLBACK TO SAVEPOINT comes back */
		if (st == bestatus_st_idle_xact_aborted)
			fl |= PGMARK_TH_ABORTED;
		e->flags = fl;
		return wptr;
	}
	aborted = ab || (fl & PGMARK_TH_ABORTED);
	if (e->xact_ts)
		mark_txn_end(id, now, e->xact_ts, sst, aborted, ab, !(fl & PGMARK_TH_UNTIMED));
	else if (took && !(fl & PGMARK_TH_FAILED))
		mark_txn_end(id, now, act, sst, aborted, ab, true);
	e->xact_ts = 0;
	e->flags = PGMARK_TH_SEEN;
	return wptr;
}

#endif
