/* Where PostgreSQL keeps what dbtap reads, per major version or from DWARF; its epoch. */
#ifndef DBTAP_PG_LAYOUT_H
#define DBTAP_PG_LAYOUT_H

#include <stdint.h>
#include <sys/types.h>

struct elf_file;

/* One row of the layout table: the shared-memory struct the counters live in. */
struct pg_layout {
	int major_min, major_max;
	const char *symbol;      /* global pointer to the struct (in .dynsym) */
	const char *type;        /* the struct's name */
	const char *xid_field;   /* nextFullXid (12, 13) or nextXid */
	uint32_t xid_off, xid_size;
	uint32_t oid_off, oid_size;           /* nextOid */
	uint32_t oidcount_off, oidcount_size; /* oidCount */
	uint32_t struct_size;
	/* xidStopLimit and xidWrapLimit (4 bytes each): where XID assignment stops, and wraps */
	uint32_t xidstop_off, xidwrap_off;
};

/* XID_STOP and XID_WRAP are no watch presets: serve reads them for the wraparound horizon. */
enum pg_counter { PG_COUNTER_XID, PG_COUNTER_OID, PG_COUNTER_XID_STOP, PG_COUNTER_XID_WRAP };

/* A counter found: follow `symbol` (a pointer) and watch `size` bytes at +offset. */
struct pg_counter_loc {
	const char *symbol;
	const char *field;
	uint64_t offset, size;
	int from_dwarf;  /* 1 when the binary's debug info gave the layout */
};

/* The table row covering major, or NULL for a version dbtap does not know. */
const struct pg_layout *pg_layout_find(int major);
/* The table itself (for tests and docs): n rows. */
const struct pg_layout *pg_layout_table(int *n);

/* "xid" -> PG_COUNTER_XID, "oid" -> PG_COUNTER_OID; -1 when name is no preset. */
int pg_counter_parse(const char *name);
const char *pg_counter_name(enum pg_counter c);
/* What the counter's writes mean, for headers: "transactions that got an XID". */
const char *pg_counter_meaning(enum pg_counter c);

/*
 * Locates counter c in a server of this major version. With DWARF in ef (NULL: none)
 * the binary's own debug info decides; otherwise the table. Unknown versions without
 * DWARF are refused: prints an error with a hint and returns -1.
 */
int pg_counter_locate(enum pg_counter c, int major, const struct elf_file *ef,
		      struct pg_counter_loc *loc);

/*
 * Where a backend's current wait event is: the u32 at field_off behind the pointer
 * `symbol`. 14+: my_wait_event_info (points at MyProc->wait_event_info once the
 * backend has a PGPROC, at a local word before); 12-13: MyProc->wait_event_info.
 */
struct pg_wait_loc {
	const char *symbol;
	uint32_t field_off;
	int from_dwarf;
};

/*
 * Locates the wait event word for this major version: DWARF in ef when present, else
 * the table (versions whose layout was checked). Refused otherwise: error, hint, -1.
 */
int pg_wait_locate(int major, const struct elf_file *ef, struct pg_wait_loc *loc);

/*
 * The run-time address of the wait event pointer in the processes of binary loaded
 * like ref (a cluster's backends are forks of its postmaster: the same address in
 * every one), the offset behind it, and the load bias. 0, or -1 with error and hint.
 */
struct pg_wait_word {
	uint64_t ptr_addr;
	uint32_t field_off;
	uint64_t bias;
	struct pg_wait_loc loc;
};
int pg_wait_word_find(int major, const char *binary, pid_t ref, struct pg_wait_word *w);

/*
 * PostgreSQL's epoch, TimestampTz 0 (2000-01-01 00:00 UTC), in Unix seconds: its
 * timestamps (PgBackendStatus's among them) count microseconds from there.
 */
#define PG_EPOCH_UNIX_S 946684800LL

/*
 * A backend's row of pg_stat_activity, PgBackendStatus in shared memory, found through
 * MyBEEntry (.dynsym): its state (idle, running, idle in transaction...), when its
 * current statement started and the statement's text. wait reads them at context
 * switches instead of trapping at the transaction and statement probes. The offsets
 * and the BackendState values are per major version, checked against each version's
 * header (the table); DWARF in the binary takes precedence for the offsets. A version
 * without a row has no such path (wait then uses the USDT probes).
 */
struct pg_bestatus_loc {
	int major_min, major_max;
	uint32_t state_off;       /* st_state: BackendState, 4 bytes */
	uint32_t activity_ts_off; /* st_activity_start_timestamp: TimestampTz, 8 bytes */
	uint32_t activity_off;    /* st_activity_raw: char * to the statement's text */
	/* BackendState values */
	uint32_t st_idle, st_running, st_idle_xact, st_fastpath, st_idle_xact_aborted,
		 st_disabled;
	int from_dwarf;
	/*
	 * The row's head, the same in every version with a row: st_changecount (int, odd
	 * while the backend writes the row), st_procpid (int, 0 once it left), and three of
	 * its TimestampTz (8 bytes, PostgreSQL's microseconds since 2000): the transaction's
	 * start and the time st_state was last set (state_change; query_start is
	 * activity_ts_off above); and the backend's start (backend_start), which tells its
	 * row from the next owner's after it left.
	 */
	uint32_t changecount_off, procpid_off, xact_ts_off, state_ts_off, proc_ts_off;
};

/* The table row for major, NULL when none; with DWARF in ef its offsets override. */
int pg_bestatus_locate(int major, const struct elf_file *ef, struct pg_bestatus_loc *loc);
const struct pg_bestatus_loc *pg_bestatus_table(int *n);

/*
 * The run-time addresses of MyBEEntry, debug_query_string and pgstat_track_activities
 * in the processes of binary loaded like ref, and the layout. 0; -1 when the version
 * has no row or the binary lacks a symbol (why in w->why, nothing printed).
 */
struct pg_bestatus {
	uint64_t beentry_addr;  /* &MyBEEntry */
	uint64_t query_addr;    /* &debug_query_string */
	uint64_t track_addr;    /* &pgstat_track_activities (a bool) */
	struct pg_bestatus_loc loc;
	char why[160];
};
int pg_bestatus_find(int major, const char *binary, pid_t ref, struct pg_bestatus *w);

/* Major version of the server a process belongs to (DATADIR/PG_VERSION via its cwd); -1. */
int pg_major_of_process(pid_t pid);

#endif
