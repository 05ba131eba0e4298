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
#include "perf/breakpoint.h"
#include "pg/cluster.h"
#include "pg/layout.h"
#include "target/elf.h"
#include "target/expr.h"
#include "target/mem.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/runloop.h"


struct proc_info {
	pid_t pid;
	char type[64];
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
	bool events;
	uint32_t ring_bytes;
	bool poll;
	struct time_opts time;

	struct watch_probe *probe;
	uint64_t t0;                /* start, for -v's time to attached */
	struct runloop rl;
	struct proc_info *procs;
	int nprocs;
	struct hashmap proc_of_pid; /* pid -> index in procs: looked up per ring-buffer event */
	uint64_t prev_total;
	uint64_t value_start, value_prev;
	bool have_start;
	uint64_t nevents;
	bool target_gone;
	struct json j;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap watch WHAT [--pg [TARGET] | -p PID[,PID] | -t TID] [-i SECS] [-d SECS]\n"
		"                   [--by pid|type] [--top N] [--events] [--mode trap|poll] [-j]\n\n"
		"How often a variable is written, by which process, to what value: a hardware\n"
		"watchpoint on every CPU, counted in the kernel for the target's processes only.\n\n"
		"WHAT:\n"
		"  xid                  the next-XID counter: transactions that got an XID\n"
		"  oid                  the next-OID counter: OIDs consumed, and by whom\n"
		"  SYMBOL[+OFF]         a global variable of the target's binary\n"
		"  SYMBOL->FIELD        follow the pointer SYMBOL, then FIELD (needs debug info)\n"
		"  SYMBOL->OFF          follow the pointer SYMBOL, then OFF bytes\n"
		"  0xADDRESS[+OFF]      an address in the target\n"
		"  each optionally :LEN (1, 2, 4, 8) and :MODE (w, rw, x); default from the type, w\n\n"
		"options:\n"
		"  --pg [TARGET]        every process of a cluster, later backends included\n"
		"                       (the default for xid and oid)\n"
		"  -p PID[,PID]         those processes and all their threads\n"
		"  -t TID               one thread\n"
		"  -i, --interval SECS  report every SECS (default 1; 0: only the summary)\n"
		"  -d, --duration SECS  stop after SECS (default: Ctrl-C)\n"
		"  --by pid|type        top writers per interval, by process or backend type\n"
		"  --top N              how many writers to show (default 10)\n"
		"  --events             print every write: time, pid, type, new value\n"
		"  --buffer KIB         event ring buffer size (default 1024); drops are counted\n"
		"  --mode trap|poll     trap: watchpoint (default); poll: read the value every\n"
		"                       interval, no cost to the target, no attribution\n"
		"  -j, --json           one JSON object per line\n"
		"  --layouts            where xid and oid live in each known PostgreSQL version\n\n"
		"examples:\n"
		"  dbtap watch xid --by pid          XIDs assigned per second, by backend\n"
		"  dbtap watch oid --by type -d 60   OIDs consumed in a minute, by backend type\n"
		"  dbtap watch xid --mode poll       the same rate without any trap\n"
		"  dbtap watch 'ShmemVariableCache->4:4' --pg   oidCount, by offset\n");
}

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
 * The writer's type: from the title the BPF program saw at its first write (it may
 * have exited since), else from /proc while it lives. Retried while unknown.
 */
static void fill_type(struct watch_cmd *c, struct proc_info *p)
{
	char title[128], user[64], db[64];

	if (c->t.kind == TARGET_PG) {
		if (c->probe && !watch_probe_title(c->probe, p->pid, title, sizeof(title)) &&
		    !pg_title_parse(title, p->type, sizeof(p->type), user, sizeof(user), db, sizeof(db)))
			return;
		snprintf(p->type, sizeof(p->type), "%s", target_proc_type(&c->t, p->pid));
	} else if (!c->probe || watch_probe_title(c->probe, p->pid, title, sizeof(title))) {
		proc_comm(p->pid, p->type, sizeof(p->type));
	} else if (!pg_title_parse(title, p->type, sizeof(p->type), user, sizeof(user), db,
				   sizeof(db))) {
		return; /* a PostgreSQL process watched with -p or -t */
	} else {
		/* argv[0]'s base name: what ps shows for a program that keeps its argv. */
		const char *base = strrchr(title, '/');
		snprintf(p->type, sizeof(p->type), "%.63s", base ? base + 1 : title);
	}
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
	if (!p->type[0])
		fill_type(c, p);
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
	const char *type = p ? p->type : "";
	double t = e->ts > c->rl.start_ns ? (e->ts - c->rl.start_ns) / 1e9 : 0;
	uint64_t v = mask_value(e->value, c->loc.len);

	c->nevents++;
	if (global.json) {
		json_object_begin(&c->j, NULL);
		json_str(&c->j, "event", "write");
		json_double(&c->j, "time", t);
		json_int(&c->j, "pid", e->pid);
		json_int(&c->j, "tid", e->tid);
		json_str(&c->j, "type", type);
		json_uint(&c->j, "value", v);
		char ip[32];
		snprintf(ip, sizeof(ip), "0x%" PRIx64, (uint64_t)e->ip);
		json_str(&c->j, "ip", ip);
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
	} else {
		printf("%12.6f  pid %-7u %-24s value %" PRIu64 "\n", t, e->pid, type, v);
	}
	return 0;
}

/* Every poll tick: drain events, note new writers while their titles exist, watch the target. */
static bool check(void *arg)
{
	struct watch_cmd *c = arg;

	if (c->probe) {
		watch_probe_poll_events(c->probe, 0);
		refresh_counts(c);
	}
	if (!target_alive(&c->t)) {
		c->target_gone = true;
		return false;
	}
	return true;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;
	uint64_t dx = x->count - x->prev, dy = y->count - y->prev;
	return dx < dy ? 1 : dx > dy ? -1 : x->pid - y->pid;
}

static int cmp_count(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : x->pid - y->pid;
}

struct type_sum {
	const char *type;
	uint64_t count;
};

static int cmp_type(const void *a, const void *b)
{
	const struct type_sum *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->type, y->type);
}

/* Writers per backend type; delta: in this interval, else since attach. */
static int sum_types(struct watch_cmd *c, bool delta, struct type_sum **out)
{
	struct type_sum *v = calloc(c->nprocs + 1, sizeof(*v));
	int n = 0;

	for (int i = 0; i < c->nprocs; i++) {
		uint64_t cnt = c->procs[i].count - (delta ? c->procs[i].prev : 0);
		if (!cnt)
			continue;
		const char *type = c->procs[i].type[0] ? c->procs[i].type : "?";
		int k;
		for (k = 0; k < n; k++)
			if (!strcmp(v[k].type, type))
				break;
		if (k == n)
			v[n++].type = type;
		v[k].count += cnt;
	}
	qsort(v, n, sizeof(*v), cmp_type);
	*out = v;
	return n;
}

static void print_writers(struct watch_cmd *c, bool delta, const char *key, int limit)
{
	int shown = 0;

	if (c->by == BY_TYPE && delta) {
		struct type_sum *ts;
		int n = sum_types(c, delta, &ts);
		if (global.json)
			json_array_begin(&c->j, key);
		for (int i = 0; i < n && shown < limit; i++, shown++) {
			if (global.json) {
				json_object_begin(&c->j, NULL);
				json_str(&c->j, "type", ts[i].type);
				json_uint(&c->j, "count", ts[i].count);
				json_object_end(&c->j);
			} else {
				printf("%22s %-30s %10" PRIu64 "\n", "", ts[i].type, ts[i].count);
			}
		}
		if (global.json)
			json_array_end(&c->j);
		free(ts);
		return;
	}

	qsort(c->procs, c->nprocs, sizeof(*c->procs), delta ? cmp_delta : cmp_count);
	/* sorting moved them: the index follows (the values are replaced, nothing is added) */
	for (int i = 0; i < c->nprocs; i++)
		hashmap_put_u64(&c->proc_of_pid, (uint32_t)c->procs[i].pid, i);
	if (global.json)
		json_array_begin(&c->j, key);
	for (int i = 0; i < c->nprocs && shown < limit; i++) {
		struct proc_info *p = &c->procs[i];
		uint64_t cnt = p->count - (delta ? p->prev : 0);
		if (!cnt)
			continue;
		shown++;
		if (global.json) {
			json_object_begin(&c->j, NULL);
			json_int(&c->j, "pid", p->pid);
			json_str(&c->j, "type", p->type);
			json_uint(&c->j, "count", cnt);
			json_object_end(&c->j);
		} else {
			printf("%14s %7d %-30s %10" PRIu64 "\n", "", p->pid, p->type[0] ? p->type : "?",
			       cnt);
		}
	}
	if (global.json)
		json_array_end(&c->j);
}

static void report_interval(struct watch_cmd *c, double elapsed)
{
	uint64_t value, writes;
	bool have_value = read_value(c, &value) == 0;

	if (c->poll) {
		writes = have_value ? mask_value(value - c->value_prev, c->loc.len) : 0;
		if (have_value)
			c->value_prev = value;
	} else {
		uint64_t total = refresh_counts(c);
		writes = total - c->prev_total;
		c->prev_total = total;
	}
	double rate = elapsed > 0 ? writes / elapsed : 0;
	double t = runloop_total(&c->rl);

	if (global.json) {
		json_object_begin(&c->j, NULL);
		json_double(&c->j, "time", t);
		json_uint(&c->j, "writes", writes);
		json_double(&c->j, "rate", rate);
		if (have_value)
			json_uint(&c->j, "value", value);
		else
			json_null(&c->j, "value");
		if (c->by != BY_NONE)
			print_writers(c, true, "top", c->top);
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
	} else {
		printf("%10.3f %10" PRIu64 " %12.1f  ", t, writes, rate);
		if (have_value)
			printf("%" PRIu64 "\n", value);
		else
			printf("-\n");
		if (c->by != BY_NONE)
			print_writers(c, true, NULL, c->top);
	}
	for (int i = 0; i < c->nprocs; i++)
		c->procs[i].prev = c->procs[i].count;
	fflush(stdout);
}

static void report_summary(struct watch_cmd *c, const char *end)
{
	uint64_t value, total;
	bool have_value = read_value(c, &value) == 0;
	double dur = runloop_total(&c->rl);

	if (c->poll) {
		if (!have_value) { /* the target is gone: the last value read is the end */
			value = c->value_prev;
			have_value = c->have_start;
		}
		total = have_value && c->have_start ? mask_value(value - c->value_start, c->loc.len) : 0;
	} else {
		watch_probe_poll_events(c->probe, 0);
		total = refresh_counts(c);
	}

	if (global.json) {
		json_object_begin(&c->j, NULL);
		json_bool(&c->j, "summary", true);
		json_str(&c->j, "what", c->what);
		json_str(&c->j, "expr", c->expr_text);
		char addr[32];
		snprintf(addr, sizeof(addr), "0x%" PRIx64, c->loc.addr);
		json_str(&c->j, "address", addr);
		json_int(&c->j, "len", c->loc.len);
		json_str(&c->j, "mode", c->poll ? "poll" : "trap");
		json_double(&c->j, "duration", dur);
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
		print_writers(c, false, "processes", c->nprocs);
		if (c->by == BY_TYPE) {
			struct type_sum *ts;
			int n = sum_types(c, false, &ts);
			json_array_begin(&c->j, "types");
			for (int i = 0; i < n; i++) {
				json_object_begin(&c->j, NULL);
				json_str(&c->j, "type", ts[i].type);
				json_uint(&c->j, "count", ts[i].count);
				json_object_end(&c->j);
			}
			json_array_end(&c->j);
			free(ts);
		}
		if (!c->poll) {
			json_uint(&c->j, "ignored", watch_probe_ignored(c->probe));
			json_uint(&c->j, "unattributed", watch_probe_unattributed(c->probe));
			if (c->events) {
				json_uint(&c->j, "events", c->nevents);
				json_uint(&c->j, "dropped", watch_probe_dropped(c->probe));
			}
		}
		json_str(&c->j, "end", end);
		json_object_end(&c->j);
		json_flush_line(&c->j, stdout);
		return;
	}

	printf("\n%s: %" PRIu64 " %s in %.1f s (%.1f/s)", c->what, total,
	       c->poll ? "increments" : "writes", dur, dur > 0 ? total / dur : 0);
	if (c->have_start && have_value)
		printf(", value %" PRIu64 " -> %" PRIu64, c->value_start, value);
	printf("\n");
	if (!c->poll && c->nprocs) {
		printf("%14s %7s %-30s %10s\n", "", "PID", "TYPE", "WRITES");
		int limit = c->by == BY_NONE ? 10 : c->top;
		print_writers(c, false, NULL, limit);
		if (c->nprocs > limit)
			printf("%14s (%d more writers; -j lists them all)\n", "", c->nprocs - limit);
	}
	if (c->by == BY_TYPE && !c->poll) {
		struct type_sum *ts;
		int n = sum_types(c, false, &ts);
		printf("%14s %-38s %10s\n", "", "TYPE", "WRITES");
		for (int i = 0; i < n; i++)
			printf("%14s %-38s %10" PRIu64 "\n", "", ts[i].type, ts[i].count);
		free(ts);
	}
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
			json_object_begin(&j, NULL);
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

static int parse_options(struct watch_cmd *c, struct target_opts *to, int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACING_LONGOPTS,
		BY_LONGOPT,
		{ "top", required_argument, NULL, 'T' },
		{ "events", no_argument, NULL, 'e' },
		{ "mode", required_argument, NULL, 'm' },
		{ "buffer", required_argument, NULL, 'B' },
		{ "layouts", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool layouts = false;
	int opt, r;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":" TRACING_SHORTOPTS "h", longopts, NULL)) != -1) {
		if ((r = tracing_opt(to, &c->time, opt, argc, argv)) < 0)
			return EXIT_USAGE;
		if (r)
			continue;
		switch (opt) {
		case 'b':
			if (by_opt(&c->by, optarg, BY_PID | BY_TYPE) < 0)
				return EXIT_USAGE;
			break;
		case 'T':
			if (top_opt(&c->top, optarg, "writers") < 0)
				return EXIT_USAGE;
			break;
		case 'e':
			c->events = true;
			break;
		case 'B': {
			char *end;
			unsigned long kb = strtoul(optarg, &end, 10);
			long page = sysconf(_SC_PAGESIZE);
			if (*end || kb * 1024 < (unsigned long)page || kb > 1024 * 1024 || (kb & (kb - 1))) {
				error("bad --buffer '%s'", optarg);
				hint("the event ring buffer size in KiB: a power of 2 from %ld to 1048576",
				     page / 1024);
				return EXIT_USAGE;
			}
			c->ring_bytes = kb * 1024;
			break;
		}
		case 'm':
			if (!strcmp(optarg, "trap"))
				c->poll = false;
			else if (!strcmp(optarg, "poll"))
				c->poll = true;
			else {
				error("bad --mode '%s'", optarg);
				hint("--mode trap (a hardware watchpoint, attributes each write) or --mode"
				     " poll (reads the value each interval, costs the target nothing)");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case 'L':
			layouts = true; /* printed once -j, wherever it is, has been seen */
			break;
		default:
			return cmd_bad_option("watch", opt, argv);
		}
	}
	if (layouts) {
		print_layouts();
		exit(EXIT_OK);
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
		printf("%10s %10s %12s  %s\n", "TIME", c->poll ? "INCREASE" : "WRITES", "RATE/s", "VALUE");
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

static int run(struct watch_cmd *c)
{
	enum runloop_event ev;
	const char *end = "duration";

	runloop_init(&c->rl, c->time.interval, c->time.duration);
	if (!c->poll && watch_probe_attach(c->probe, c->loc.addr, c->loc.len, c->loc.mode) < 0) {
		if (errno == ENOSPC)
			hint("or count without traps: 'dbtap watch %s --mode poll' gives exact totals"
			     " without attribution", c->what);
		return EXIT_FAIL;
	}
	c->have_start = read_value(c, &c->value_start) == 0;
	c->value_prev = c->value_start;
	verbose("attached %.1f ms after start", (now_ns() - c->t0) / 1e6);
	/* The clock starts once attached: rates cover the time the watchpoint was in place. */
	runloop_init(&c->rl, c->time.interval, c->time.duration);
	announce(c);

	for (;;) {
		ev = runloop_wait(&c->rl, c->events ? 20 : 100, check, c);
		if (ev != RUNLOOP_TICK)
			break;
		report_interval(c, runloop_elapsed(&c->rl));
	}
	if (ev == RUNLOOP_STOPPED)
		end = "interrupted";
	if (c->target_gone) {
		end = "target exited";
		if (c->t.kind == TARGET_PG)
			fprintf(stderr, "the cluster stopped (postmaster %d exited) after %.1f s;"
				" what was collected:\n", (int)c->t.pg.postmaster, runloop_total(&c->rl));
		else
			fprintf(stderr, "the target exited after %.1f s; what was collected:\n",
				runloop_total(&c->rl));
	}
	report_summary(c, end);
	fflush(stdout);
	return EXIT_OK;
}

int cmd_watch(int argc, char **argv)
{
	struct watch_cmd c = { .preset = -1, .top = 10, .time.interval = 1 };
	struct target_opts to = { 0 };
	int ret;

	c.t0 = now_ns();
	ret = parse_options(&c, &to, argc, argv);
	if (ret)
		return ret;
	c.preset = pg_counter_parse(c.what);
	if (c.preset < 0 && watch_expr_parse(c.what, &c.expr) < 0)
		return EXIT_USAGE;
	if (!to.pg_set && !to.pids && !to.tid) {
		if (c.preset < 0) {
			error("watch '%s' needs a target", c.what);
			hint("--pg [DATADIR|PORT|PID] for a PostgreSQL cluster, -p PID for processes");
			return EXIT_USAGE;
		}
		to.pg_set = true; /* xid and oid: the only cluster running here */
	}
	ret = target_resolve(&c.t, &to, true);
	if (ret)
		return ret;
	json_init(&c.j);
	ret = load(&c);
	if (!ret)
		ret = resolve(&c);
	if (!ret)
		ret = run(&c);
	watch_probe_destroy(c.probe);
	json_release(&c.j);
	free(c.procs);
	hashmap_free(&c.proc_of_pid);
	target_free(&c.t);
	return ret;
}
