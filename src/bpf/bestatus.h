/* Where a cluster's PgBackendStatus rows are, as the programs of bestatus.bpf.h read them. */
#ifndef DBTAP_BPF_BESTATUS_H
#define DBTAP_BPF_BESTATUS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * The fields below st_changecount..st_state_start_timestamp are read in one copy of the
 * row's first BESTATUS_HEAD_LEN bytes: every offset of the head must lie inside it.
 */
#define BESTATUS_HEAD_LEN 64
/*
 * bestatus_stmt_end() copies the row's first BESTATUS_ROW_LEN bytes at once when st_state
 * and st_activity_raw lie inside them too (row_fits; 15 and 16: 232 and 248): one read
 * instead of three at a statement's end.
 */
#define BESTATUS_ROW_LEN 256

/*
 * One cluster's rows: &MyBEEntry (the same address in every backend: they are forks
 * of one postmaster), the field offsets and the BackendState values of its major
 * version (pg/layout.c). beentry_addr 0: no such path.
 */
struct bestatus_cfg {
	__u64 beentry_addr;
	__u64 query_addr; /* &debug_query_string */
	__u32 changecount_off, procpid_off, xact_ts_off, activity_ts_off, state_ts_off, proc_ts_off;
	__u32 state_off, activity_off;
	__u32 st_idle, st_running, st_idle_xact, st_fastpath, st_idle_xact_aborted;
	__u32 row_fits;
};

/* Per backend thread, what bestatus_stmt_end() has seen. Zeroed when the thread is new. */
struct bestatus_track {
	__s64 seen_state_us; /* state_start_us at the last look: unchanged, nothing new */
	__s64 done_us;       /* activity_start_us of the last statement ended */
	__s64 failed_us;     /* activity_start_us of a statement known to have failed */
	__u32 in_stmt;       /* at the last look, inside a statement begun at or after since */
	__u32 pad;
	__s64 proc_start_us; /* backend_start of the row when it last said it was this backend's */
};

#ifndef __VMLINUX_H__
#include <stddef.h>
#include <sys/types.h>

struct pg_bestatus;

/*
 * cfg from what pg_bestatus_find() found; 0, or -1 with why (the head does not fit
 * BESTATUS_HEAD_LEN: a layout from debug info this reader cannot take).
 */
int bestatus_cfg_init(struct bestatus_cfg *cfg, const struct pg_bestatus *b, char *why,
		      size_t whylen);

/*
 * The rows of the cluster whose processes run binary loaded like ref (a postmaster or
 * one of its backends), found by pg_bestatus_find() into *b, checked by
 * bestatus_cfg_init(), with track_activities on: 0; -1 and why otherwise.
 */
int bestatus_cfg_find(struct bestatus_cfg *cfg, struct pg_bestatus *b, int major,
		      const char *binary, pid_t ref, char *why, size_t whylen);

/* Sets a skeleton's bestatus_* read-only data (bestatus.bpf.h) from cfg, before load. */
#define BESTATUS_RODATA(skel, cfg)                                                       \
	do {                                                                             \
		const struct bestatus_cfg *c_ = (cfg);                                   \
		(skel)->rodata->bestatus_beentry_addr = c_->beentry_addr;                \
		(skel)->rodata->bestatus_query_addr = c_->query_addr;                    \
		(skel)->rodata->bestatus_changecount_off = c_->changecount_off;          \
		(skel)->rodata->bestatus_procpid_off = c_->procpid_off;                  \
		(skel)->rodata->bestatus_xact_ts_off = c_->xact_ts_off;                  \
		(skel)->rodata->bestatus_activity_ts_off = c_->activity_ts_off;          \
		(skel)->rodata->bestatus_state_ts_off = c_->state_ts_off;                \
		(skel)->rodata->bestatus_proc_ts_off = c_->proc_ts_off;                  \
		(skel)->rodata->bestatus_state_off = c_->state_off;                      \
		(skel)->rodata->bestatus_activity_off = c_->activity_off;                \
		(skel)->rodata->bestatus_st_idle = c_->st_idle;                          \
		(skel)->rodata->bestatus_st_running = c_->st_running;                    \
		(skel)->rodata->bestatus_st_idle_xact = c_->st_idle_xact;                \
		(skel)->rodata->bestatus_st_fastpath = c_->st_fastpath;                  \
		(skel)->rodata->bestatus_st_idle_xact_aborted = c_->st_idle_xact_aborted; \
		(skel)->rodata->bestatus_row_fits = c_->row_fits;                        \
	} while (0)

/* PostgreSQL's clock (TimestampTz: microseconds since 2000-01-01 UTC) now. */
__s64 bestatus_pg_now_us(void);
#endif

#endif
