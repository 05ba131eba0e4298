/* A backend's own PgBackendStatus row (its pg_stat_activity row), read by BPF where the backend is the current task. */
#ifndef DBTAP_BPF_BESTATUS_BPF_H
#define DBTAP_BPF_BESTATUS_BPF_H

#include "bpf/bestatus.h"

/*
 * PostgreSQL keeps each backend's state, statement text and timestamps in a row of
 * shared memory that only the backend itself writes (pgstat_report_activity() and
 * friends), between two increments of st_changecount. Read from the backend while it
 * is the current task (at its sched_switch, when it leaves the CPU, or as it exits)
 * the row cannot change under the reader: a backend preempted inside the write leaves
 * st_changecount odd, and the read is refused (the next switch-out reads it whole).
 * That is what these helpers are for: nothing here traps, and nothing is read from a
 * task that is not the current one (its memory is another mm).
 *
 * Configuration, before load: BESTATUS_RODATA(skel, &cfg) (bpf/bestatus.h), cfg from
 * bestatus_cfg_init(). bestatus_beentry_addr 0 means the path is off.
 */
const volatile __u64 bestatus_beentry_addr = 0;
const volatile __u64 bestatus_query_addr = 0; /* &debug_query_string */
const volatile __u32 bestatus_changecount_off = 0, bestatus_procpid_off = 0,
		     bestatus_xact_ts_off = 0, bestatus_activity_ts_off = 0,
		     bestatus_state_ts_off = 0, bestatus_state_off = 0, bestatus_activity_off = 0,
		     bestatus_proc_ts_off = 0;
const volatile __u32 bestatus_st_idle = 0, bestatus_st_running = 0, bestatus_st_idle_xact = 0,
		     bestatus_st_fastpath = 0, bestatus_st_idle_xact_aborted = 0;
const volatile __u32 bestatus_row_fits = 0; /* st_state, st_activity_raw in BESTATUS_ROW_LEN */

/*
 * Statements that began before this instant (PostgreSQL's clock: bestatus_pg_now_us())
 * are not counted by bestatus_stmt_end(): tracing started while they ran, or after
 * they ended. User space sets it just before attaching (skel->bss).
 */
__s64 bestatus_since_us = 0;

/* The row's head; timestamps in PostgreSQL's microseconds since 2000-01-01, 0 unset. */
struct bestatus_head {
	__s32 changecount;       /* odd while the backend writes the row */
	__s32 procpid;           /* the backend's pid; 0 once it left (pgstat_beshutdown_hook) */
	__s64 xact_start_us;     /* xact_start: 0 outside a transaction */
	__s64 activity_start_us; /* query_start: when the latest statement began */
	__s64 state_start_us;    /* state_change: when st_state was last set */
	__s64 proc_start_us;     /* backend_start: the row's owner's, kept after it left */
};

/*
 * The row of the current task's backend: *be when known, else MyBEEntry, kept in *be
 * (set once, early in the backend's life; the row stays the backend's until it
 * exits, where PostgreSQL clears MyBEEntry first). 0 while the backend has no row.
 */
static __always_inline __u64 bestatus_row(__u64 *be)
{
	__u64 p = 0;

	if (*be)
		return *be;
	if (bpf_probe_read_user(&p, sizeof(p), (const void *)bestatus_beentry_addr))
		return 0;
	*be = p;
	return p;
}

#define BESTATUS_AT_IN(buf, len, off, type) (*(type *)((buf) + ((off) & ((len) - sizeof(type)))))
#define BESTATUS_AT(buf, off, type) BESTATUS_AT_IN(buf, BESTATUS_HEAD_LEN, off, type)

/*
 * Reads the head of row be in one copy. 0; -1 unreadable (a page not present: again at
 * the next look); 1 the backend was preempted inside a write (odd st_changecount).
 */
static __always_inline int bestatus_head_read(__u64 be, struct bestatus_head *h)
{
	/* 8-byte aligned: the fields are read in place, with strict alignment */
	__u64 words[BESTATUS_HEAD_LEN / 8];
	const char *buf = (const char *)words;

	if (bpf_probe_read_user(words, sizeof(words), (const void *)be))
		return -1;
	/* the masks keep the verifier's bounds; user space checked the offsets fit */
	h->changecount = BESTATUS_AT(buf, bestatus_changecount_off, __s32);
	h->procpid = BESTATUS_AT(buf, bestatus_procpid_off, __s32);
	h->xact_start_us = BESTATUS_AT(buf, bestatus_xact_ts_off, __s64);
	h->activity_start_us = BESTATUS_AT(buf, bestatus_activity_ts_off, __s64);
	h->state_start_us = BESTATUS_AT(buf, bestatus_state_ts_off, __s64);
	h->proc_start_us = BESTATUS_AT(buf, bestatus_proc_ts_off, __s64);
	return h->changecount & 1;
}

/*
 * The head, st_state and the text's address in one copy of the row's first
 * BESTATUS_ROW_LEN bytes (only where bestatus_row_fits); what bestatus_head_read()
 * returns.
 */
static __always_inline int bestatus_row_read(__u64 be, struct bestatus_head *h, __u32 *st,
					     __u64 *text)
{
	__u64 words[BESTATUS_ROW_LEN / 8];
	const char *buf = (const char *)words;

	if (bpf_probe_read_user(words, sizeof(words), (const void *)be))
		return -1;
	h->changecount = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_changecount_off, __s32);
	h->procpid = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_procpid_off, __s32);
	h->xact_start_us = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_xact_ts_off, __s64);
	h->activity_start_us = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_activity_ts_off,
					      __s64);
	h->state_start_us = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_state_ts_off, __s64);
	h->proc_start_us = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_proc_ts_off, __s64);
	*st = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_state_off, __u32);
	*text = BESTATUS_AT_IN(buf, BESTATUS_ROW_LEN, bestatus_activity_off, __u64);
	return h->changecount & 1;
}

/* st_state (BackendState); 0, or -1 unreadable. */
static __always_inline int bestatus_state_read(__u64 be, __u32 *st)
{
	return bpf_probe_read_user(st, sizeof(*st), (const void *)(be + bestatus_state_off)) ? -1 : 0;
}

/* The address of the row's statement text (st_activity_raw, NUL-terminated); 0 unreadable. */
static __always_inline __u64 bestatus_text_addr(__u64 be)
{
	__u64 p = 0;

	if (bpf_probe_read_user(&p, sizeof(p), (const void *)(be + bestatus_activity_off)))
		return 0;
	return p;
}

/* Between statements: idle, idle in transaction, idle in transaction (aborted). */
static __always_inline bool bestatus_between(__u32 st)
{
	return st == bestatus_st_idle || st == bestatus_st_idle_xact ||
	       st == bestatus_st_idle_xact_aborted;
}

/* Inside a transaction or a statement (what pg_stat_activity calls neither idle nor disabled). */
static __always_inline bool bestatus_busy(__u32 st)
{
	return st == bestatus_st_running || st == bestatus_st_fastpath ||
	       st == bestatus_st_idle_xact || st == bestatus_st_idle_xact_aborted;
}

/* One statement that ended. */
struct bestatus_end {
	__s64 start_us;  /* query_start (GetCurrentStatementStartTimestamp()) */
	__s64 end_us;    /* state_change: when the backend reported itself between statements */
	__u64 text;      /* st_activity_raw: its text, in the backend (0 unreadable) */
	bool failed;     /* it ended in an error (see bestatus_stmt_failed()) */
	/*
	 * Set whenever the row was read whole, whatever bestatus_stmt_end() returns: the
	 * row changed since the last look, and now says idle (between statements and
	 * outside a transaction block: a transaction ended since that look).
	 */
	bool idle;
};

/*
 * Whether a statement of row be (the current task's; process tgid) ended since the
 * last call with t. exiting: the task is on its way out (sched_process_exit), where
 * its row already says it left (st_procpid 0). PostgreSQL sets state_change at every report and, when a statement
 * begins, query_start; back between statements (idle, idle in transaction) the row
 * says when the statement began and when it ended, on the server's own clock, as
 * pg_stat_activity does (state_change - query_start). So one look at the backend's
 * every switch-out finds each statement after which it waited for its client (or
 * anything else). 1 and *out: one ended, not seen before, begun at or after
 * bestatus_since_us. 0: nothing new. -1: not readable now, or the backend is inside a
 * write (t is left as it was: the next look reads the row again).
 *
 * A statement that ended in state idle in transaction (aborted) failed: it aborted the
 * transaction block, or ran in one already aborted (where only ROLLBACK, COMMIT and
 * ROLLBACK TO, which leave that state, succeed). One that failed outside a block ends
 * idle like any other: bestatus_stmt_failed() must have marked it.
 *
 * The row must say it is the backend's own (st_procpid): a new backend's MyBEEntry
 * points at its row before it writes the row, which then still holds the last
 * statement of the backend that had it before.
 */
static __always_inline int bestatus_stmt_end(__u64 be, __u32 tgid, bool exiting,
					     struct bestatus_track *t, struct bestatus_end *out)
{
	struct bestatus_head h;
	__u32 st = 0;
	__u64 text = 0;

	if (bestatus_row_fits) {
		/* most looks find a statement ended: everything in one copy */
		if (bestatus_row_read(be, &h, &st, &text))
			return -1;
	} else if (bestatus_head_read(be, &h)) {
		return -1;
	}
	if (h.state_start_us == t->seen_state_us)
		return 0;
	/*
	 * At exit the row says 0 (pgstat_beshutdown_hook) and is free: the backend's slot
	 * is given up before the process ends, and a backend that starts meanwhile may
	 * have written it, run a statement and left too. The row is still this backend's
	 * only if its backend_start is the one seen while the row said so.
	 */
	if (h.procpid == (__s32)tgid)
		t->proc_start_us = h.proc_start_us;
	else if (!(exiting && h.procpid == 0 && t->proc_start_us &&
		   h.proc_start_us == t->proc_start_us))
		return -1;
	if (!bestatus_row_fits && bestatus_state_read(be, &st))
		return -1;
	t->seen_state_us = h.state_start_us;
	out->idle = st == bestatus_st_idle;
	t->in_stmt = !bestatus_between(st) && h.activity_start_us &&
		     h.activity_start_us >= bestatus_since_us;
	if (!bestatus_between(st) || !h.activity_start_us || h.activity_start_us == t->done_us)
		return 0;
	t->done_us = h.activity_start_us;
	if (h.activity_start_us < bestatus_since_us)
		return 0;
	out->start_us = h.activity_start_us;
	out->end_us = h.state_start_us;
	out->text = bestatus_row_fits ? text : bestatus_text_addr(be);
	out->failed = t->failed_us == h.activity_start_us || st == bestatus_st_idle_xact_aborted;
	return 1;
}

/* Whether debug_query_string is set: a statement's text (NULL between statements). */
static __always_inline bool bestatus_query_set(void)
{
	__u64 q = 0;

	bpf_probe_read_user(&q, sizeof(q), (const void *)bestatus_query_addr);
	return q != 0;
}

/*
 * The current statement of row be failed: for a program at transaction__abort when
 * debug_query_string is NULL there (PostgreSQL's error recovery clears it before it
 * aborts the transaction; a ROLLBACK statement aborts with its text set).
 */
static __always_inline void bestatus_stmt_failed(__u64 be, struct bestatus_track *t)
{
	struct bestatus_head h;

	if (!bestatus_head_read(be, &h))
		t->failed_us = h.activity_start_us;
}

#endif
