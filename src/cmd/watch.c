/* dbtap watch: writes to a variable per interval and by whom (options and output). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/watch.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "perf/breakpoint.h"
#include "pg/cluster.h"
#include "pg/layout.h"
#include "target/elf.h"
#include "target/expr.h"
#include "target/label.h"
#include "target/mem.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/runloop.h"


struct proc_info {
	pid_t pid;
	struct pid_label l;
	bool labelled;
	uint64_t prev; /* count at the previous interval report */
	uint64_t count;
	uint64_t base; /* counted under this pid before its map entry was dropped */
};

struct watch_cmd {
	const char *what;
	int preset;                 /* enum pg_counter, or -1 */
	struct watch_expr expr;
	struct watch_loc loc;
	char expr_text[256];        /* the expression watched (a preset's spelled out) */
	const char *field;          /* a preset's field name */
	struct target t;
	pid_t reader;               /* a process whose memory shows the value */
	enum by by;
	int top;
	bool sort_pid; /* --sort pid: writers by pid, not by writes */
	bool events;
	uint32_t ring_bytes;
	bool poll;
	bool layouts;              /* --layouts: print the table, watch nothing */
	struct frame f;

	struct watch_probe *probe;
	uint64_t t0;                /* start, for -v's time to attached */
	struct proc_info *procs;
	int nprocs;
	struct hashmap proc_of_pid; /* pid -> index in procs: looked up per ring-buffer event */
	uint64_t prev_total;
	uint64_t value_start, value_prev;
	/*
	 * Poll mode reads the value at every tick (100 ms), not only at reports: a target
	 * that exits takes its memory along, and what it added after the last read is
	 * lost. The summary says so, with the time of that last read.
	 */
	uint64_t value_last, start_ns, last_read_ns;
	bool gone;
	bool have_start;
	uint64_t nevents;
	struct json j;
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_TOP, OPT_SORT, OPT_EVENTS, OPT_BUFFER, OPT_MODE, OPT_LAYOUTS };

static const struct frame_opt watch_opts[] = {
	FRAME_OPT_PG,
	FRAME_OPT_PID,
	FRAME_OPT_TID,
	{ "interval", 'i', required_argument, "SECS", "report every SECS (default 1; 0: only the summary)",
	  FRAME_OPT_TIME },
	FRAME_OPT_DURATION,
	{ "by", OPT_BY, required_argument, "pid|type|database|user",
	  "top writers per interval: by process, backend type, database or user" },
	{ "top", OPT_TOP, required_argument, "N", "how many writers to show (default 10)" },
	{ "sort", OPT_SORT, required_argument, "writes|pid", "order of the writers (default writes)" },
	{ "events", OPT_EVENTS, no_argument, NULL, "print every write: time, pid, type, new value" },
	{ "buffer", OPT_BUFFER, required_argument, "KIB",
	  "event ring buffer size (default 1024); drops are counted" },
	{ "mode", OPT_MODE, required_argument, "trap|poll",
	  "trap: watchpoint (default); poll: read the value every\n"
	  "interval, no cost to the target, no attribution" },
	{ "layouts", OPT_LAYOUTS, no_argument, NULL,
	  "where xid and oid live in each known PostgreSQL version" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd watch_frame = {
	.name = "watch",
	.args = "WHAT",
	.about =
		"How often a variable is written, by which process, to what value: a hardware\n"
		"watchpoint on every CPU, counted in the kernel for the target's processes only.\n\n"
		"WHAT:\n"
		"  xid                  the next-XID counter: transactions that got an XID\n"
		"  oid                  the next-OID counter: OIDs consumed, and by whom\n"
		"  SYMBOL[+OFF]         a global variable of the target's binary\n"
		"  SYMBOL->FIELD        follow the pointer SYMBOL, then FIELD (needs debug info)\n"
		"  SYMBOL->OFF          follow the pointer SYMBOL, then OFF bytes\n"
		"  0xADDRESS[+OFF]      an address in the target\n"
		"  each optionally :LEN (1, 2, 4, 8) and :MODE (w, rw, x); default from the type, w\n"
		"xid and oid default to --pg, the only cluster running.\n",
	.examples =
		"  dbtap watch xid --by pid          XIDs assigned per second, by backend\n"
		"  dbtap watch oid --by type -d 60   OIDs consumed in a minute, by backend type\n"
		"  dbtap watch xid --mode poll       the same rate without any trap\n"
		"  dbtap watch 'ShmemVariableCache->4:4' --pg   oidCount, by offset\n",
	.opts = watch_opts,
};

static uint64_t mask_value(uint64_t v, int len)
{
	return len >= 8 ? v : v & ((1ull << (len * 8)) - 1);
}

static int read_value(struct watch_cmd *c, uint64_t *v)
{
	*v = 0;
	if (c->loc.mode == WATCH_X || mem_read(c->reader, c->loc.addr, v, c->loc.len) < 0)
		return -1;
	*v = mask_value(*v, c->loc.len);
	return 0;
}

/*
 * The writer's label: from the title the BPF program saw at its first write (it may
 * have exited since), else from /proc while it lives. Retried until final.
 */
static void fill_label(struct watch_cmd *c, struct proc_info *p)
{
	char title[128];
	bool have = c->probe && !watch_probe_title(c->probe, p->pid, title, sizeof(title));

	p->labelled = target_label(&c->t, p->pid, have ? title : NULL, sizeof(title), &p->l);
}

static struct proc_info *proc_info_get(struct watch_cmd *c, pid_t pid)
{
	struct proc_info *p = NULL;

	uint64_t idx;

	if (hashmap_get_u64(&c->proc_of_pid, (uint32_t)pid, &idx))
		p = &c->procs[idx];
	if (!p) {
		struct proc_info *v = realloc(c->procs, (c->nprocs + 1) * sizeof(*v));
		if (!v)
			return NULL;
		c->procs = v;
		if (hashmap_put_u64(&c->proc_of_pid, (uint32_t)pid, c->nprocs))
			return NULL;
		p = &c->procs[c->nprocs++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	if (!p->labelled)
		fill_label(c, p);
	return p;
}

/* Pulls the kernel's per-process totals into c->procs; returns the sum. */
static uint64_t refresh_counts(struct watch_cmd *c)
{
	struct watch_count *wc;
	uint64_t total = watch_probe_unattributed(c->probe);
	int n = watch_probe_read_counts(c->probe, &wc);

	for (int i = 0; i < n; i++) {
		struct proc_info *p = proc_info_get(c, wc[i].pid);
		if (!p)
			continue;
		p->count = p->base + wc[i].count;
		/* Gone processes write no more: their counts live on here, not in the map. */
		if (!proc_exists(wc[i].pid)) {
			p->base = p->count;
			watch_probe_forget(c->probe, wc[i].pid);
		}
	}
	free(wc);
	for (int i = 0; i < c->nprocs; i++)
		total += c->procs[i].count;
	return total;
}

static int on_event(void *ctx, const struct watch_event *e)
{
	struct watch_cmd *c = ctx;
	struct proc_info *p = proc_info_get(c, e->pid);
	const char *type = p ? p->l.type : "";
	double t = frame_ktime_s(&c->f, e->ts);
	uint64_t v = mask_value(e->value, c->loc.len);

	c->nevents++;
	if (global.json) {
		char ip[32];
		frame_json_begin_kind(&c->j, "event", t);
		json_int(&c->j, "pid", e->pid);
		json_int(&c->j, "tid", e->tid);
		json_str(&c->j, "type", type);
		json_uint(&c->j, "value", v);
		snprintf(ip, sizeof(ip), "0x%" PRIx64, (uint64_t)e->ip);
		json_str(&c->j, "ip", ip);
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
	} else {
		printf("%12.6f  pid %-7u %-24s value %" PRIu64 "\n", t, e->pid, type, v);
	}
	return 0;
}

/* Every poll tick: drain events, note new writers while their titles exist. */
static bool poll_events(void *arg)
{
	struct watch_cmd *c = arg;
	uint64_t v;

	if (c->probe) {
		watch_probe_poll_events(c->probe);
		refresh_counts(c);
	}
	if (c->poll && c->have_start && !c->gone) {
		if (read_value(c, &v) == 0) {
			c->value_last = v;
			c->last_read_ns = now_ns();
		} else if (!target_alive(&c->t)) {
			c->gone = true;
		}
	}
	return true;
}

/* One row of a breakdown: a process, or the processes of one type, database or user. */
struct writer {
	pid_t pid;
	const struct pid_label *l;
	const char *name; /* what the row is for (its type, database or user) */
	uint64_t writes;
};

static bool sort_by_pid;

static int cmp_writer(const void *a, const void *b)
{
	const struct writer *x = a, *y = b;

	if (!sort_by_pid && x->writes != y->writes)
		return x->writes < y->writes ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The writers by by (BY_PID: processes), in this interval (delta) or since attach. */
static int collect_writers(struct watch_cmd *c, enum by by, bool delta, struct writer **out)
{
	struct writer *w = calloc(c->nprocs + 1, sizeof(*w));
	int n = 0;

	*out = w;
	if (!w)
		return 0;
	for (int i = 0; i < c->nprocs; i++) {
		const struct proc_info *p = &c->procs[i];
		uint64_t cnt = p->count - (delta ? p->prev : 0);
		const char *name = by_label(&p->l, by);
		int k = n;

		if (!cnt)
			continue;
		if (by != BY_PID)
			for (k = 0; k < n && strcmp(w[k].name, name); k++)
				;
		if (k == n)
			w[n++] = (struct writer){ by == BY_PID ? p->pid : 0, &p->l, name, 0 };
		w[k].writes += cnt;
	}
	sort_by_pid = c->sort_pid;
	qsort(w, n, sizeof(*w), cmp_writer);
	return n;
}

static void json_writers(struct watch_cmd *c, enum by by, bool delta, int limit)
{
	struct writer *w;
	int n = collect_writers(c, by, delta, &w);

	json_array_begin(&c->j, by_array(by));
	for (int i = 0; i < n && i < limit; i++) {
		json_object_begin(&c->j, NULL);
		if (by == BY_PID) {
			json_int(&c->j, "pid", w[i].pid);
			json_str(&c->j, "type", w[i].l->type);
			json_str(&c->j, "user", w[i].l->user[0] ? w[i].l->user : NULL);
			json_str(&c->j, "database", w[i].l->database[0] ? w[i].l->database : NULL);
		} else {
			json_str(&c->j, by_name(by), w[i].name[0] ? w[i].name : NULL);
		}
		json_uint(&c->j, "writes", w[i].writes);
		json_object_end(&c->j);
	}
	json_array_end(&c->j);
	free(w);
}

/* Rows under the report's line, indented past the stamp; the name column widens. */
static void text_writers(struct watch_cmd *c, enum by by, bool delta, int limit, bool head)
{
	struct writer *w;
	int n = collect_writers(c, by, delta, &w), width = 4;
	char title[16];

	for (int i = 0; i < n && i < limit; i++)
		width = frame_width(width, w[i].name[0] ? w[i].name : "-");
	snprintf(title, sizeof(title), "%s", by == BY_PID ? "type" : by_name(by));
	for (char *p = title; *p; p++)
		*p = toupper((unsigned char)*p);
	if (head && by == BY_PID)
		printf("%11s %7s %-*s %10s\n", "", "PID", width, title, "WRITES");
	else if (head)
		printf("%11s %-*s %10s\n", "", width, title, "WRITES");
	for (int i = 0; i < n && i < limit; i++) {
		const char *name = w[i].name[0] ? w[i].name : "-";
		if (by == BY_PID)
			printf("%11s %7d %-*s %10" PRIu64 "\n", "", w[i].pid, width, name, w[i].writes);
		else
			printf("%11s %-*s %10" PRIu64 "\n", "", width, name, w[i].writes);
	}
	if (head && n > limit)
		printf("%11s (%d more; -j lists them all)\n", "", n - limit);
	free(w);
}

static void report_interval(struct watch_cmd *c, const struct frame_report *r)
{
	uint64_t value, writes;
	bool have_value = read_value(c, &value) == 0;

	if (c->poll) {
		if (have_value) {
			c->value_last = value;
			c->last_read_ns = now_ns();
		}
		/* the target gone: its last value read at a tick ends the count */
		writes = c->have_start ? mask_value(c->value_last - c->value_prev, c->loc.len) : 0;
		c->value_prev = c->value_last;
	} else {
		watch_probe_poll_events(c->probe);
		uint64_t total = refresh_counts(c);
		writes = total - c->prev_total;
		c->prev_total = total;
	}
	double rate = r->span_s > 0 ? writes / r->span_s : 0;

	if (global.json) {
		frame_json_begin(&c->j, r);
		json_uint(&c->j, "writes", writes);
		json_double(&c->j, "rate", rate);
		if (have_value)
			json_uint(&c->j, "value", value);
		else
			json_null(&c->j, "value");
		if (c->by != BY_NONE)
			json_writers(c, c->by, true, c->top);
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
	} else {
		frame_text_head(stdout, r);
		printf("%10" PRIu64 " %12.1f  ", writes, rate);
		if (have_value)
			printf("%" PRIu64 "\n", value);
		else
			printf("-\n");
		if (c->by != BY_NONE)
			text_writers(c, c->by, true, c->top, false);
	}
	for (int i = 0; i < c->nprocs; i++)
		c->procs[i].prev = c->procs[i].count;
	fflush(stdout);
}

static void report_summary(struct watch_cmd *c, const struct frame_report *r)
{
	uint64_t value, total;
	bool have_value = read_value(c, &value) == 0;
	double dur = r->span_s;

	if (c->poll) {
		if (have_value) {
			c->value_last = value;
			c->last_read_ns = now_ns();
		} else { /* the target is gone: the last value read at a tick is the end */
			value = c->value_last;
			have_value = c->have_start;
			c->gone = true;
		}
		total = have_value && c->have_start ? mask_value(value - c->value_start, c->loc.len) : 0;
	} else {
		watch_probe_poll_events(c->probe);
		total = refresh_counts(c);
	}

	if (global.json) {
		char addr[32];
		frame_json_begin(&c->j, r);
		json_str(&c->j, "what", c->what);
		json_str(&c->j, "expr", c->expr_text);
		snprintf(addr, sizeof(addr), "0x%" PRIx64, c->loc.addr);
		json_str(&c->j, "address", addr);
		json_int(&c->j, "len", c->loc.len);
		json_str(&c->j, "mode", c->poll ? "poll" : "trap");
		json_uint(&c->j, "total", total);
		json_double(&c->j, "rate", dur > 0 ? total / dur : 0);
		if (c->have_start)
			json_uint(&c->j, "value_start", c->value_start);
		else
			json_null(&c->j, "value_start");
		if (have_value)
			json_uint(&c->j, "value", value);
		else
			json_null(&c->j, "value");
		json_writers(c, BY_PID, false, c->nprocs);
		if (c->by != BY_NONE && c->by != BY_PID)
			json_writers(c, c->by, false, c->nprocs);
		if (c->poll) {
			json_bool(&c->j, "target_gone", c->gone);
			json_double(&c->j, "last_read_s", (c->last_read_ns - c->start_ns) / 1e9);
		}
		if (!c->poll) {
			json_uint(&c->j, "ignored", watch_probe_ignored(c->probe));
			json_uint(&c->j, "unattributed", watch_probe_unattributed(c->probe));
			if (c->events) {
				json_uint(&c->j, "events", c->nevents);
				json_uint(&c->j, "dropped", watch_probe_dropped(c->probe));
			}
		}
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
		return;
	}

	frame_text_head(stdout, r);
	printf("%s: %" PRIu64 " %s (%.1f/s)", c->what, total, c->poll ? "increments" : "writes",
	       dur > 0 ? total / dur : 0);
	if (c->have_start && have_value)
		printf(", value %" PRIu64 " -> %" PRIu64, c->value_start, value);
	printf("\n");
	if (!c->poll && c->nprocs)
		text_writers(c, BY_PID, false, c->by == BY_NONE ? 10 : c->top, true);
	if (c->by != BY_NONE && c->by != BY_PID && !c->poll)
		text_writers(c, c->by, false, c->nprocs, true);
	if (c->poll && c->gone)
		printf("the target is gone: what it added after the last read, %.2f s into the run,"
		       " is not counted\n", (c->last_read_ns - c->start_ns) / 1e9);
	if (c->events && watch_probe_dropped(c->probe))
		printf("events: %" PRIu64 " printed, %" PRIu64 " dropped (ring buffer full)\n",
		       c->nevents, watch_probe_dropped(c->probe));
	/* Writes the filter left out: say so, since -p of a postmaster misses its backends. */
	if (!c->poll && watch_probe_ignored(c->probe)) {
		printf("ignored: %" PRIu64 " writes by processes outside the target\n",
		       watch_probe_ignored(c->probe));
		if (c->t.kind != TARGET_PG)
			hint("-p counts only the processes given (not their children): --pg covers "
			     "every process of a cluster");
	}
}

static void report(void *ctx, const struct frame_report *r)
{
	if (r->kind == FRAME_SUMMARY)
		report_summary(ctx, r);
	else
		report_interval(ctx, r);
}

/* --layouts: where xid and oid are in each known major version. */
static void print_layouts(void)
{
	int n;
	const struct pg_layout *l = pg_layout_table(&n);
	struct json j;

	json_init(&j);
	if (!global.json)
		printf("%-7s %-20s %-22s %-12s %8s %8s %8s %6s\n", "PG", "POINTER", "STRUCT",
		       "XID FIELD", "XID", "NEXTOID", "OIDCOUNT", "SIZE");
	for (int i = 0; i < n; i++, l++) {
		if (global.json) {
			frame_json_begin_kind(&j, "layout", 0);
			json_int(&j, "major_min", l->major_min);
			json_int(&j, "major_max", l->major_max);
			json_str(&j, "symbol", l->symbol);
			json_str(&j, "struct", l->type);
			json_str(&j, "xid_field", l->xid_field);
			json_int(&j, "xid_offset", l->xid_off);
			json_int(&j, "xid_size", l->xid_size);
			json_int(&j, "nextOid_offset", l->oid_off);
			json_int(&j, "nextOid_size", l->oid_size);
			json_int(&j, "oidCount_offset", l->oidcount_off);
			json_int(&j, "oidCount_size", l->oidcount_size);
			json_int(&j, "size", l->struct_size);
			json_object_end(&j);
			json_flush_line(&j, stdout);
		} else {
			char range[16], x[16], o[16], oc[16];
			snprintf(range, sizeof(range), "%d-%d", l->major_min, l->major_max);
			snprintf(x, sizeof(x), "%u:%u", l->xid_off, l->xid_size);
			snprintf(o, sizeof(o), "%u:%u", l->oid_off, l->oid_size);
			snprintf(oc, sizeof(oc), "%u:%u", l->oidcount_off, l->oidcount_size);
			printf("%-7s %-20s %-22s %-12s %8s %8s %8s %6u\n", range, l->symbol, l->type,
			       l->xid_field, x, o, oc, l->struct_size);
		}
	}
	json_release(&j);
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct watch_cmd *c = ctx;

	switch (key) {
	case OPT_BY:
		return by_opt(&c->by, arg, BY_PID | BY_TYPE | BY_DATABASE | BY_USER);
	case OPT_TOP:
		return top_opt(&c->top, arg, "writers");
	case OPT_SORT:
		if (strcmp(arg, "writes") && strcmp(arg, "pid")) {
			error("bad --sort '%s'", arg);
			hint("--sort writes (most first, the default) or --sort pid");
			return -1;
		}
		c->sort_pid = !strcmp(arg, "pid");
		return 0;
	case OPT_EVENTS:
		c->events = true;
		return 0;
	case OPT_BUFFER: {
		char *end;
		unsigned long kb = strtoul(arg, &end, 10);
		long page = sysconf(_SC_PAGESIZE);
		if (!*arg || *end || kb * 1024 < (unsigned long)page || kb > 1024 * 1024 ||
		    (kb & (kb - 1))) {
			error("bad --buffer '%s'", arg);
			hint("the event ring buffer size in KiB: a power of 2 from %ld to 1048576",
			     page / 1024);
			return -1;
		}
		c->ring_bytes = kb * 1024;
		return 0;
	}
	case OPT_MODE:
		if (!strcmp(arg, "trap"))
			c->poll = false;
		else if (!strcmp(arg, "poll"))
			c->poll = true;
		else {
			error("bad --mode '%s'", arg);
			hint("--mode trap (a hardware watchpoint, attributes each write) or --mode"
			     " poll (reads the value each interval, costs the target nothing)");
			return -1;
		}
		return 0;
	case OPT_LAYOUTS:
		c->layouts = true; /* printed once -j, wherever it is, has been seen */
		return 0;
	}
	return -1;
}

static int parse_options(struct watch_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &watch_frame, argc, argv, on_opt, c);

	if (r)
		return r;
	if (c->layouts) {
		print_layouts();
		return FRAME_HELP; /* done: exit 0 */
	}
	if (optind >= argc) {
		error("watch needs WHAT to watch");
		hint("e.g. 'dbtap watch xid', 'dbtap watch oid --by pid', 'dbtap watch SYMBOL -p PID';"
		     " see 'dbtap watch --help'");
		return EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		error("unexpected argument '%s': watch takes one WHAT", argv[optind + 1]);
		hint("for --pg with a value write --pg=TARGET; see 'dbtap watch --help'");
		return EXIT_USAGE;
	}
	c->what = argv[optind];
	if (c->poll && (c->events || c->by != BY_NONE)) {
		error("--mode poll cannot tell who wrote: %s needs --mode trap",
		      c->events ? "--events" : "--by");
		hint("drop %s, or watch with traps (the default)", c->events ? "--events" : "--by");
		return EXIT_USAGE;
	}
	return 0;
}

/* The expression for WHAT: a preset's layout spelled out, or WHAT itself. */
static int build_expr(struct watch_cmd *c, const struct elf_file *ef)
{
	if (c->preset < 0) {
		snprintf(c->expr_text, sizeof(c->expr_text), "%s", c->what);
		return 0;
	}
	int major = c->t.kind == TARGET_PG ? c->t.pg.major : pg_major_of_process(c->reader);
	if (major <= 0) {
		error("process %d is not a PostgreSQL server: '%s' needs one", (int)c->reader, c->what);
		hint("use --pg for a cluster, or watch a SYMBOL or 0xADDRESS in other programs");
		return EXIT_USAGE;
	}
	struct pg_counter_loc pl;
	if (pg_counter_locate(c->preset, major, ef, &pl) < 0)
		return EXIT_FAIL;
	c->field = pl.field;
	snprintf(c->expr_text, sizeof(c->expr_text), "%s->%" PRIu64 ":%" PRIu64, pl.symbol,
		 pl.offset, pl.size);
	if (watch_expr_parse(c->expr_text, &c->expr) < 0)
		return EXIT_FAIL;
	return 0;
}

static int resolve(struct watch_cmd *c)
{
	struct elf_file *ef = NULL;
	int ret;

	c->reader = c->t.kind == TARGET_PG ? c->t.pg.postmaster : c->t.pids[0];
	if (c->preset >= 0 || c->expr.symbol[0]) {
		if (!c->t.binary) {
			error("cannot tell which program process %d runs", (int)c->reader);
			hint("run as root so /proc/%d/exe can be read", (int)c->reader);
			return EXIT_FAIL;
		}
		ef = elf_file_open(c->t.binary);
		if (!ef)
			return EXIT_FAIL;
	}
	ret = build_expr(c, ef);
	if (!ret)
		ret = watch_expr_resolve(&c->expr, c->reader, ef, &c->loc);
	/* -p with several processes: one per-CPU breakpoint needs one address for all. */
	for (int i = 1; !ret && c->t.kind == TARGET_PIDS && i < c->t.npids; i++) {
		struct watch_loc other;
		ret = watch_expr_resolve(&c->expr, c->t.pids[i], ef, &other);
		if (!ret && other.addr != c->loc.addr) {
			error("'%s' is at 0x%" PRIx64 " in process %d but at 0x%" PRIx64 " in process %d",
			      c->expr_text, c->loc.addr, (int)c->reader, other.addr, (int)c->t.pids[i]);
			hint("one watchpoint covers one address: watch these processes one at a time,"
			     " or use --pg when they belong to one PostgreSQL cluster");
			ret = EXIT_USAGE;
		}
	}
	elf_file_close(ef);
	return ret;
}

static void announce(struct watch_cmd *c)
{
	char what[384];

	if (c->preset >= 0)
		snprintf(what, sizeof(what), "%s (%s, %s = %s)", c->what,
			 pg_counter_meaning(c->preset), c->field, c->expr_text);
	else
		snprintf(what, sizeof(what), "%s", c->expr_text);
	if (c->poll)
		fprintf(stderr, "polling %s at 0x%" PRIx64 " (%d bytes) in %s\n", what, c->loc.addr,
			c->loc.len, target_describe(&c->t));
	else
		fprintf(stderr, "watching %s at 0x%" PRIx64 " (%d bytes, %s) in %s, on %d cpus\n",
			what, c->loc.addr, c->loc.len, watch_mode_name(c->loc.mode),
			target_describe(&c->t), watch_probe_ncpus(c->probe));
	if (!global.json) {
		printf("%9s  %10s %12s  %s\n", "TIME", c->poll ? "INCREASE" : "WRITES", "RATE/s", "VALUE");
		fflush(stdout);
	}
}

/* Loaded before resolve() reads the target's ELF: see watch_probe_load(). */
static int load(struct watch_cmd *c)
{
	struct watch_opts o = {
		.target = &c->t,
		.events = c->events,
		.ring_bytes = c->ring_bytes,
		.on_event = on_event,
		.ctx = c,
	};

	if (c->poll)
		return 0;
	c->probe = watch_probe_load(&o);
	return c->probe ? 0 : EXIT_FAIL;
}

/* After the summary: the watchpoints and the program go, then the rest. */
static void cleanup(void *ctx)
{
	struct watch_cmd *c = ctx;

	watch_probe_destroy(c->probe);
	c->probe = NULL;
	json_release(&c->j);
	free(c->procs);
	c->procs = NULL;
	c->nprocs = 0;
	hashmap_free(&c->proc_of_pid);
	target_free(&c->t);
}

static int run(struct watch_cmd *c)
{
	const struct frame_ops ops = {
		.report = report,
		.poll = poll_events,
		.poll_ms = c->events ? 20 : 100,
		.teardown = cleanup,
		.teardown_what = "removing the watchpoints",
	};

	/* Signal handlers before attaching: a Ctrl-C during the attach ends it cleanly. */
	frame_start(&c->f);
	if (!c->poll && watch_probe_attach(c->probe, c->loc.addr, c->loc.len, c->loc.mode) < 0) {
		char topts[4200];
		if (errno == ENOSPC)
			hint("or count without traps: 'dbtap watch %s%s --mode poll' gives exact "
			     "totals without attribution", c->what,
			     target_opts_spell(&c->f.to, topts, sizeof(topts)));
		cleanup(c);
		return EXIT_FAIL;
	}
	c->have_start = read_value(c, &c->value_start) == 0;
	c->value_prev = c->value_last = c->value_start;
	c->start_ns = c->last_read_ns = now_ns();
	verbose("attached %.1f ms after start", (now_ns() - c->t0) / 1e6);
	/* The clock starts once attached: rates cover the time the watchpoint was in place. */
	frame_start(&c->f);
	announce(c);
	c->f.target = &c->t;
	return frame_run(&c->f, &ops, c);
}

int cmd_watch(int argc, char **argv)
{
	struct watch_cmd c = { .preset = -1, .top = 10, .f.time.interval = 1 };
	int ret;

	c.t0 = now_ns();
	json_init(&c.j);
	ret = parse_options(&c, argc, argv);
	if (ret) {
		json_release(&c.j);
		return frame_status(ret);
	}
	c.preset = pg_counter_parse(c.what);
	if (c.preset < 0 && watch_expr_parse(c.what, &c.expr) < 0)
		return EXIT_USAGE;
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid) {
		if (c.preset < 0) {
			error("watch '%s' needs a target", c.what);
			hint("--pg [DATADIR|PORT|PID] for a PostgreSQL cluster, -p PID for processes");
			return EXIT_USAGE;
		}
		c.f.to.pg_set = true; /* xid and oid: the only cluster running here */
	}
	ret = target_resolve(&c.t, &c.f.to, true);
	if (ret)
		return ret;
	ret = load(&c);
	if (!ret)
		ret = resolve(&c);
	if (!ret)
		return run(&c); /* the frame's teardown frees everything */
	cleanup(&c);
	return ret;
}
