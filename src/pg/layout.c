/* Per-version layout of the XID/OID counters; DWARF takes over where the table ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/layout.h"
#include "target/elf.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/strbuf.h"

/*
 * The transam variables struct: 12-13 call the XID field nextFullXid, 14 renamed it
 * and grew the struct (xactCompletionCount, oldestClogXid), 17 renamed the struct and
 * its global. Offsets checked against offsetof() on the real headers (tests do it).
 */
static const struct pg_layout layouts[] = {
	{ 12, 13, "ShmemVariableCache", "VariableCacheData", "nextFullXid", 8, 8, 0, 4, 4, 4, 56, 28, 32 },
	{ 14, 16, "ShmemVariableCache", "VariableCacheData", "nextXid", 8, 8, 0, 4, 4, 4, 72, 28, 32 },
	{ 17, 18, "TransamVariables", "TransamVariablesData", "nextXid", 8, 8, 0, 4, 4, 4, 72, 28, 32 },
};

#define NLAYOUTS ((int)(sizeof(layouts) / sizeof(layouts[0])))

const struct pg_layout *pg_layout_table(int *n)
{
	*n = NLAYOUTS;
	return layouts;
}

const struct pg_layout *pg_layout_find(int major)
{
	for (int i = 0; i < NLAYOUTS; i++)
		if (major >= layouts[i].major_min && major <= layouts[i].major_max)
			return &layouts[i];
	return NULL;
}

int pg_counter_parse(const char *name)
{
	if (!strcmp(name, "xid"))
		return PG_COUNTER_XID;
	if (!strcmp(name, "oid"))
		return PG_COUNTER_OID;
	return -1;
}

const char *pg_counter_name(enum pg_counter c)
{
	static const char *const names[] = { "xid", "oid", "xidStopLimit", "xidWrapLimit" };

	return names[c];
}

const char *pg_counter_meaning(enum pg_counter c)
{
	return c == PG_COUNTER_XID ? "transactions that got an XID" : "OIDs consumed";
}

/* Newest names first: a future version most likely keeps the latest ones. */
static const char *const dwarf_symbols[] = { "TransamVariables", "ShmemVariableCache" };
static const char *const dwarf_xid_fields[] = { "nextXid", "nextFullXid" };

static int locate_dwarf(enum pg_counter c, const struct elf_file *ef, struct pg_counter_loc *loc)
{
	for (size_t i = 0; i < sizeof(dwarf_symbols) / sizeof(dwarf_symbols[0]); i++) {
		struct elf_sym sym;
		if (elf_file_find_sym(ef, dwarf_symbols[i], &sym) < 0)
			continue;
		if (c != PG_COUNTER_XID) {
			const char *f = c == PG_COUNTER_OID ? "nextOid" : pg_counter_name(c);
			if (elf_file_var_pointee_field(ef, dwarf_symbols[i], f, &loc->offset,
						       &loc->size) < 0)
				continue;
			loc->field = f;
		} else {
			size_t k;
			for (k = 0; k < sizeof(dwarf_xid_fields) / sizeof(dwarf_xid_fields[0]); k++)
				if (!elf_file_var_pointee_field(ef, dwarf_symbols[i], dwarf_xid_fields[k],
								&loc->offset, &loc->size))
					break;
			if (k == sizeof(dwarf_xid_fields) / sizeof(dwarf_xid_fields[0]))
				continue;
			loc->field = dwarf_xid_fields[k];
		}
		loc->symbol = dwarf_symbols[i];
		loc->from_dwarf = 1;
		return 0;
	}
	return -1;
}

int pg_counter_locate(enum pg_counter c, int major, const struct elf_file *ef,
		      struct pg_counter_loc *loc)
{
	memset(loc, 0, sizeof(*loc));
	if (ef && elf_file_has_dwarf(ef) && !locate_dwarf(c, ef, loc))
		return 0;

	const struct pg_layout *l = pg_layout_find(major);
	if (!l) {
		error("PostgreSQL %d: dbtap knows where the %s counter is in versions %d to %d only,"
		      " and the server binary has no debug info to tell", major, pg_counter_name(c),
		      layouts[0].major_min, layouts[NLAYOUTS - 1].major_max);
		hint("install the server's debug symbols (DWARF) so dbtap can read the layout, or"
		     " watch an expression with the offset, e.g. '%s->%u:%u'",
		     layouts[NLAYOUTS - 1].symbol,
		     c == PG_COUNTER_XID ? layouts[NLAYOUTS - 1].xid_off : layouts[NLAYOUTS - 1].oid_off,
		     c == PG_COUNTER_XID ? layouts[NLAYOUTS - 1].xid_size : layouts[NLAYOUTS - 1].oid_size);
		return -1;
	}
	loc->symbol = l->symbol;
	if (c == PG_COUNTER_XID) {
		loc->field = l->xid_field;
		loc->offset = l->xid_off;
		loc->size = l->xid_size;
	} else if (c == PG_COUNTER_OID) {
		loc->field = "nextOid";
		loc->offset = l->oid_off;
		loc->size = l->oid_size;
	} else {
		loc->field = pg_counter_name(c);
		loc->offset = c == PG_COUNTER_XID_STOP ? l->xidstop_off : l->xidwrap_off;
		loc->size = 4;
	}
	return 0;
}

int pg_major_of_process(pid_t pid)
{
	struct strbuf sb = STRBUF_INIT;
	char *cwd = proc_cwd(pid);
	int major = -1;

	if (!cwd)
		return -1;
	strbuf_addstr(&sb, cwd);
	strbuf_addstr(&sb, "/PG_VERSION");
	free(cwd);
	char *path = strbuf_detach(&sb);
	if (!strbuf_read_file(&sb, path))
		major = atoi(sb.buf) > 0 ? atoi(sb.buf) : -1;
	free(path);
	strbuf_release(&sb);
	return major;
}

/*
 * 14 introduced my_wait_event_info (a pointer in .dynsym, what pgstat_report_wait_start
 * writes through); before it the word is PGPROC's wait_event_info, found through MyProc.
 * x86-64 PGPROC offsets: 13 from offsetof() on 13.16's headers; both 12 (12.22) and 13
 * (13.23) found in a live server's sleeping backend (the only word holding its Timeout
 * event) and confirmed by writing ids there and reading pg_stat_activity back.
 */
static const struct {
	int major_min, major_max;
	const char *symbol;
	uint32_t field_off;
} wait_locs[] = {
	{ 12, 12, "MyProc", 676 },
	{ 13, 13, "MyProc", 684 },
	{ 14, 18, "my_wait_event_info", 0 },
};

#define NWAITLOCS ((int)(sizeof(wait_locs) / sizeof(wait_locs[0])))

int pg_wait_locate(int major, const struct elf_file *ef, struct pg_wait_loc *loc)
{
	struct elf_sym sym;
	uint64_t off, size;

	memset(loc, 0, sizeof(*loc));
	if (ef && elf_file_has_dwarf(ef)) {
		if (!elf_file_find_sym(ef, "my_wait_event_info", &sym)) {
			loc->symbol = "my_wait_event_info";
			loc->from_dwarf = 1;
			return 0;
		}
		if (!elf_file_var_pointee_field(ef, "MyProc", "wait_event_info", &off, &size) &&
		    size == 4) {
			loc->symbol = "MyProc";
			loc->field_off = off;
			loc->from_dwarf = 1;
			return 0;
		}
	}
	for (int i = 0; i < NWAITLOCS; i++) {
		if (major < wait_locs[i].major_min || major > wait_locs[i].major_max)
			continue;
		loc->symbol = wait_locs[i].symbol;
		loc->field_off = wait_locs[i].field_off;
		return 0;
	}
	error("PostgreSQL %d: dbtap knows where the wait event is in versions %d to %d only,"
	      " and the server binary has no debug info to tell", major, wait_locs[0].major_min,
	      wait_locs[NWAITLOCS - 1].major_max);
	hint("install the server's debug symbols (DWARF) so dbtap can read where"
	     " MyProc->wait_event_info is");
	return -1;
}

int pg_wait_word_find(int major, const char *binary, pid_t ref, struct pg_wait_word *w)
{
	struct elf_file *ef = elf_file_open(binary);
	struct elf_sym sym;
	int ret = -1;

	memset(w, 0, sizeof(*w));
	if (!ef)
		return -1;
	if (pg_wait_locate(major, ef, &w->loc) < 0)
		goto out;
	if (elf_file_find_sym(ef, w->loc.symbol, &sym) < 0) {
		error("'%s' has no symbol %s, where PostgreSQL %d keeps the wait event", binary,
		      w->loc.symbol, major);
		hint("a server built without exported symbols needs its debug symbols installed");
		goto out;
	}
	if (proc_load_bias(ref, binary, &w->bias) < 0) {
		error("cannot find where '%s' is loaded in pid %d", binary, ref);
		hint("run as root so /proc/PID/maps can be read");
		goto out;
	}
	w->ptr_addr = w->bias + sym.value;
	w->field_off = w->loc.field_off;
	ret = 0;
out:
	elf_file_close(ef);
	return ret;
}

/*
 * PgBackendStatus up to st_activity_raw, x86-64: int st_changecount (0), int st_procpid
 * (4), BackendType st_backendType, four TimestampTz (proc at 16, xact 24, activity 32,
 * state start 40), Oid database and user, SockAddr st_clientaddr (sockaddr_storage and
 * socklen_t: 136 bytes, at 56), char *st_clienthostname (192), bool st_ssl, pointer,
 * bool st_gss, pointer (224), BackendState st_state (232), char *st_appname (240),
 * char *st_activity_raw (248). BackendState: UNDEFINED, IDLE, RUNNING,
 * IDLEINTRANSACTION, FASTPATH, IDLEINTRANSACTION_ABORTED, DISABLED. 15: offsetof() on
 * Debian's 15 headers (a test does it on every run); 16: laid out from
 * src/include/utils/backend_status.h as of 16's beta. Other versions are not checked.
 */
static const struct pg_bestatus_loc bestatus_locs[] = {
	{ 15, 16, 232, 32, 248, 1, 2, 3, 4, 5, 6, 0, 0, 4, 24, 40, 16 },
};

#define NBESTATUS ((int)(sizeof(bestatus_locs) / sizeof(bestatus_locs[0])))

const struct pg_bestatus_loc *pg_bestatus_table(int *n)
{
	*n = NBESTATUS;
	return bestatus_locs;
}

#define NBEFIELDS 8

int pg_bestatus_locate(int major, const struct elf_file *ef, struct pg_bestatus_loc *loc)
{
	uint64_t off[NBEFIELDS], size[NBEFIELDS];
	static const char *const fields[NBEFIELDS] = {
		"st_state", "st_activity_start_timestamp", "st_activity_raw", "st_changecount",
		"st_procpid", "st_xact_start_timestamp", "st_state_start_timestamp",
		"st_proc_start_timestamp" };
	static const uint64_t sizes[NBEFIELDS] = { 4, 8, 8, 4, 4, 8, 8, 8 };
	int i;

	memset(loc, 0, sizeof(*loc));
	for (i = 0; i < NBESTATUS; i++)
		if (major >= bestatus_locs[i].major_min && major <= bestatus_locs[i].major_max)
			break;
	if (i == NBESTATUS)
		return -1;
	*loc = bestatus_locs[i];
	if (!ef || !elf_file_has_dwarf(ef))
		return 0;
	/* the enum's values stay the row's: only the offsets come from the binary */
	for (i = 0; i < NBEFIELDS; i++)
		if (elf_file_var_pointee_field(ef, "MyBEEntry", fields[i], &off[i], &size[i]) < 0 ||
		    size[i] != sizes[i])
			return 0;
	loc->state_off = off[0];
	loc->activity_ts_off = off[1];
	loc->activity_off = off[2];
	loc->changecount_off = off[3];
	loc->procpid_off = off[4];
	loc->xact_ts_off = off[5];
	loc->state_ts_off = off[6];
	loc->proc_ts_off = off[7];
	loc->from_dwarf = 1;
	return 0;
}

int pg_bestatus_find(int major, const char *binary, pid_t ref, struct pg_bestatus *w)
{
	static const char *const syms[3] = { "MyBEEntry", "debug_query_string",
					     "pgstat_track_activities" };
	uint64_t *addr[3] = { &w->beentry_addr, &w->query_addr, &w->track_addr };
	struct elf_file *ef;
	struct elf_sym sym;
	uint64_t bias;
	int ret = -1;

	memset(w, 0, sizeof(*w));
	ef = elf_file_open(binary);
	if (!ef) {
		snprintf(w->why, sizeof(w->why), "'%s' cannot be read", binary);
		return -1;
	}
	if (pg_bestatus_locate(major, ef, &w->loc) < 0) {
		snprintf(w->why, sizeof(w->why), "the PgBackendStatus layout of PostgreSQL %d is"
			 " not checked", major);
		goto out;
	}
	if (proc_load_bias(ref, binary, &bias) < 0) {
		snprintf(w->why, sizeof(w->why), "cannot find where '%s' is loaded in pid %d",
			 binary, ref);
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		if (elf_file_find_sym(ef, syms[i], &sym) < 0) {
			snprintf(w->why, sizeof(w->why), "'%s' has no symbol %s", binary, syms[i]);
			goto out;
		}
		*addr[i] = bias + sym.value;
	}
	ret = 0;
out:
	elf_file_close(ef);
	return ret;
}
