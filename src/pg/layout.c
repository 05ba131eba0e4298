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
