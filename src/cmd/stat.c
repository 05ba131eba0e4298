/* dbtap stat: performance counters per process, thread, query or transaction; options and the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "bpf/tracepoint.h"
#include "cmd/stat.h"
#include "pg/layout.h"
#include "target/mem.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/strbuf.h"

const struct stat_by_key stat_by_keys[SB_NR] = {
	[SB_NONE] = { "", "", "" },
	[SB_PID] = { "pid", "processes", "PID" },
	[SB_TID] = { "tid", "processes", "TID" },
	[SB_TYPE] = { "type", "types", "TYPE" },
	[SB_DATABASE] = { "database", "databases", "DATABASE" },
	[SB_USER] = { "user", "users", "USER" },
	[SB_QUERY] = { "query", "statements", "" },
	[SB_TRANSACTION] = { "transaction", "transactions", "" },
};
/* --per WHAT, the older spelling: the --by key each word stands for */
static const struct {
	const char *per;
	enum stat_by by;
} per_alias[] = {
	{ "process", SB_PID }, { "thread", SB_TID }, { "query", SB_QUERY },
	{ "transaction", SB_TRANSACTION },
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_PER, OPT_COMPARE, OPT_TOP, OPT_SORT, OPT_USDT };

static const struct frame_opt stat_opts[] = {
	{ "event", 'e', required_argument, "EVENT[,EVENT...]",
	  "events by perf's names: task-clock, cpu-clock, context-switches,\n"
	  "cpu-migrations, page-faults, minor-faults, major-faults,\n"
	  "instructions, cycles, branches, branch-misses, cache-references,\n"
	  "cache-misses, L1-dcache-load-misses, dTLB-load-misses, rNNNN (raw),\n"
	  "PMU names libpfm4 knows; :u :k modifiers (default: task-clock,\n"
	  "context-switches, cpu-migrations, page-faults, cycles, instructions,\n"
	  "branches, branch-misses)" },
	FRAME_OPTS_TARGET,
	{ "by", OPT_BY, required_argument, "pid|tid|type|database|user|query|transaction",
	  "split the counts: per process, thread, backend type, database or\n"
	  "user; query, transaction: read in the kernel per statement" },
	{ "per", OPT_PER, required_argument, "WHAT",
	  "the older spelling of --by: process (pid), thread (tid), query,\n"
	  "transaction", FRAME_OPT_CMD, true },
	FRAME_OPTS_TIME,
	{ "compare", OPT_COMPARE, required_argument, "OTHER",
	  "a second target measured the same way, side by side:\n"
	  "pid:PID[,PID], tid:TID, pg:[TARGET], or FILE: a run saved\n"
	  "with 'dbtap -j stat ... > FILE'" },
	{ "top", OPT_TOP, required_argument, "N", "statements printed per report (default 10; -j: all)" },
	{ "sort", OPT_SORT, required_argument, "KEY",
	  "which statements --top keeps, largest first: wall (total wall\n"
	  "time, the default), mean, p99 (wall time per call), calls, or an\n"
	  "-e event's total" },
	{ "usdt", OPT_USDT, no_argument, NULL,
	  "--by query: the statements from the USDT probes (a trap each)\n"
	  "instead of the backends' PgBackendStatus (15 and 16 have it)" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd stat_frame = {
	.name = "stat",
	.about =
		"Counts events as perf stat does, for a cluster, processes or one thread. With\n"
		"--by query or --by transaction the counters are read in the kernel at the\n"
		"backends' context switches: each statement's own counts, its CPUs, its\n"
		"migrations. Statements are told from the backends' PgBackendStatus, read as\n"
		"they leave the CPU, where dbtap knows the layout (PostgreSQL 15, 16), from the\n"
		"USDT probes otherwise (a trap at each); transactions from the USDT probes.\n",
	.examples =
		"  dbtap stat --pg -d 5                          the cluster's counts over 5 s\n"
		"  dbtap stat --pg --by type -e task-clock -i 1  CPU time per backend type\n"
		"  dbtap stat --pg --by query -e task-clock,page-faults --top 5\n",
	.opts = stat_opts,
};

static int side_open_counters(struct side *s, const struct stat_cmd *c)
{
	counter_set_init(&s->cs, c->evs, c->nev);
	s->cs_init = true;
	return counter_set_open_target(&s->cs, &s->t, c->by == SB_TID);
}

/* Says once, on stderr, which events cannot be counted and why. */
static int report_open_errors(const struct stat_cmd *c, const int *err, int counted)
{
	char last_hint[512] = "";

	for (int e = 0; e < c->nev; e++) {
		char reason[128], h[512];
		if (!err[e])
			continue;
		perf_event_strerror(&c->evs[e], err[e], reason, sizeof(reason), h, sizeof(h));
		if (counted)
			warning("event '%s': %s", c->evs[e].name, reason);
		else
			error("event '%s': %s", c->evs[e].name, reason);
		/* one hint for a run of events failing for the same reason */
		bool same_next = false;
		for (int n = e + 1; n < c->nev && !same_next; n++) {
			char r2[128], h2[512];
			if (!err[n])
				continue;
			perf_event_strerror(&c->evs[n], err[n], r2, sizeof(r2), h2, sizeof(h2));
			same_next = !strcmp(h, h2);
			break;
		}
		if (!same_next && strcmp(h, last_hint))
			hint("%s", h);
		if (!same_next)
			snprintf(last_hint, sizeof(last_hint), "%s", h);
	}
	return counted ? 0 : EXIT_FAIL;
}


static void warn_multiplexing(const struct stat_cmd *c, const int *err)
{
	int hw = 0;
	for (int e = 0; e < c->nev; e++)
		hw += c->evs[e].hardware && !err[e];
	if (hw > 4)
		warning("%d hardware events: most CPUs count 4 to 8 at once, so they will be "
			"multiplexed and scaled (the share of time counted is shown)", hw);
}

/* ---- the command ---- */

static int by_parse(struct stat_cmd *c, const char *arg, bool per)
{
	if (per) {
		for (size_t i = 0; i < sizeof(per_alias) / sizeof(per_alias[0]); i++)
			if (!strcmp(arg, per_alias[i].per)) {
				c->by = per_alias[i].by;
				return 0;
			}
		error("unknown --per value '%s'", arg);
		hint("--per is the older spelling of --by: --by pid|tid|type|database|user|query|"
		     "transaction");
		return -1;
	}
	for (int i = 1; i < SB_NR; i++)
		if (!strcmp(arg, stat_by_keys[i].name)) {
			c->by = i;
			return 0;
		}
	error("bad --by '%s'", arg);
	hint("--by pid|tid|type|database|user|query|transaction");
	return -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct stat_cmd *c = ctx;

	switch (key) {
	case 'e':
		/* -e '' is an empty list, not a request for the defaults */
		if (!*arg) {
			error("-e '': no event named");
			hint("name events, e.g. -e task-clock,page-faults; without -e the "
			     "defaults are counted");
			return -1;
		}
		if (c->events.len)
			strbuf_addch(&c->events, ',');
		strbuf_addstr(&c->events, arg);
		return 0;
	case OPT_BY:
	case OPT_PER:
		return by_parse(c, arg, key == OPT_PER);
	case OPT_COMPARE:
		c->compare = arg;
		return 0;
	case OPT_TOP:
		return top_opt(&c->top, arg, "statements");
	case OPT_SORT:
		c->sort_arg = arg;
		return 0;
	case OPT_USDT:
		c->usdt = true;
		return 0;
	}
	return -1;
}

/* --compare OTHER: pid:PID[,PID], tid:TID, pg[:TARGET], or a saved -j file. */
static int resolve_other(struct side *side, const char *other, const struct stat_cmd *c)
{
	struct target_opts o = { 0 };
	struct target *t = &side->t;
	int ret;

	if (!strncmp(other, "pid:", 4)) {
		o.pids = other + 4;
	} else if (!strncmp(other, "tid:", 4)) {
		o.tid = other + 4;
	} else if (!strcmp(other, "pg") || !strncmp(other, "pg:", 3)) {
		o.pg_set = true;
		o.pg = other[2] == ':' && other[3] ? other + 3 : NULL;
	} else if (access(other, F_OK) == 0) {
		enum savedrun_kind k = c->by == SB_QUERY ? SAVEDRUN_QUERY :
				       c->by == SB_TRANSACTION ? SAVEDRUN_TRANSACTION :
								 SAVEDRUN_COUNTING;
		struct strbuf sb = STRBUF_INIT;
		ret = savedrun_load(&side->saved, other, k);
		if (ret)
			return ret;
		side->is_saved = true;
		strbuf_addf(&sb, "saved run %s (%s)", other, side->saved.target);
		side->desc = strbuf_detach(&sb);
		return 0;
	} else {
		error("cannot compare with '%s': not a target nor a file", other);
		hint("--compare pid:PID[,PID], tid:TID, pg:[DATADIR|PORT|PID], or a file saved "
		     "with 'dbtap -j stat ... > FILE'");
		return EXIT_USAGE;
	}
	ret = target_resolve(t, &o, true);
	if (!ret)
		side->desc = strdup(target_describe(t));
	return ret;
}

static void report(void *ctx, const struct frame_report *r)
{
	struct stat_cmd *c = ctx;

	if (r->kind == FRAME_SUMMARY && !strcmp(r->end, "target exited"))
		warning("%s has exited: its counts are up to its exit", c->sides[0].desc);
	if (stat_by_stmt(c->by))
		stat_report_statements(c, r);
	else
		stat_report_counters(c, r);
}

/* Closes the counters, detaches the probes, frees: safe twice. */
static void cleanup(void *ctx)
{
	struct stat_cmd *c = ctx;

	for (int i = 0; i < 2; i++) {
		struct side *s = &c->sides[i];
		if (s->cs_init)
			counter_set_free(&s->cs);
		s->cs_init = false;
		stat_probe_destroy(s->probe);
		s->probe = NULL;
		savedrun_free(&s->saved);
		stmt_table_free(&s->prev);
		target_free(&s->t);
		free(s->desc);
		s->desc = NULL;
	}
	free(c->evs);
	c->evs = NULL;
	strbuf_release(&c->events);
}

/*
 * --by query: where side s's statements come from. The backends' PgBackendStatus rows
 * (pg/layout.c) where the version's layout is known, all the processes are of one
 * server and it tracks activities; the USDT probes otherwise, and why with -v.
 */
static void bestatus_locate(const struct stat_cmd *c, const struct side *s,
			    struct stat_probe_opts *o)
{
	const struct target *t = &s->t;
	pid_t ref = t->kind == TARGET_PG ? t->pg.postmaster : t->pids[0];
	int major = t->kind == TARGET_PG ? t->pg.major : pg_major_of_process(ref);
	struct pg_bestatus b;
	uint64_t bias, b0;
	uint8_t track = 1;
	char why[160];

	if (c->by != SB_QUERY)
		return;
	if (c->usdt) {
		verbose("statements: USDT probes (--usdt)");
		return;
	}
	if (major <= 0 || pg_bestatus_find(major, t->binary, ref, &b) < 0) {
		verbose("statements: USDT probes (%s)", major > 0 ? b.why : "not a PostgreSQL server");
		return;
	}
	if (bestatus_cfg_init(&o->be, &b, why, sizeof(why)) < 0) {
		verbose("statements: USDT probes (%s)", why);
		return;
	}
	/* the rows' address is the same in every backend of one server, not across two */
	for (int i = 0; t->kind == TARGET_PIDS && i < t->npids; i++) {
		if (proc_load_bias(t->pids[i], t->binary, &bias) < 0 ||
		    proc_load_bias(ref, t->binary, &b0) < 0 || bias != b0) {
			verbose("statements: USDT probes (pid %d is not of pid %d's server)",
				t->pids[i], ref);
			memset(&o->be, 0, sizeof(o->be));
			return;
		}
	}
	/* a backend's reads from its socket are the boundary a switch may not give */
	if (!tracepoint_named("sock_recv_length")) {
		verbose("statements: USDT probes (the kernel has no sock_recv_length tracepoint:"
			" Linux 6.4 or later)");
		memset(&o->be, 0, sizeof(o->be));
		return;
	}
	/* the server's setting, as its backends inherit it: off, the rows never move */
	if (mem_read(ref, b.track_addr, &track, sizeof(track)) == 0 && !track) {
		verbose("statements: USDT probes (track_activities is off)");
		memset(&o->be, 0, sizeof(o->be));
		return;
	}
	verbose("statements: *MyBEEntry st_activity_start_timestamp +%u,"
		" st_state_start_timestamp +%u, st_state +%u, st_activity_raw +%u (%s)",
		b.loc.activity_ts_off, b.loc.state_ts_off, b.loc.state_off, b.loc.activity_off,
		b.loc.from_dwarf ? "debug info" : "layout table");
}

/* Opens each measured side's counters or probe; says what cannot be counted. */
static int open_sides(struct stat_cmd *c)
{
	for (int i = 0; i < c->nsides; i++) {
		struct side *s = &c->sides[i];
		const int *err;
		int counted, ret;
		if (s->is_saved)
			continue;
		if (stat_by_stmt(c->by)) {
			struct stat_probe_opts po = { .per_query = c->by == SB_QUERY,
						      .self_time = c->self_time };
			bestatus_locate(c, s, &po);
			ret = stat_probe_open(&s->probe, &s->t, &po, c->evs, c->nev);
			if (ret)
				return ret;
			err = stat_probe_errors(s->probe);
			counted = stat_probe_counted(s->probe);
		} else {
			ret = side_open_counters(s, c);
			if (ret)
				return ret;
			err = s->cs.err;
			counted = counter_set_counted(&s->cs);
		}
		if (i == 0 || !counted) {
			ret = report_open_errors(c, err, counted);
			if (ret)
				return ret;
			warn_multiplexing(c, err);
		}
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct side sides[2];
	struct stat_cmd c = { .top = 10, .events = STRBUF_INIT, .sides = sides, .nsides = 1 };
	const struct frame_ops ops = {
		.report = report,
		.teardown = cleanup,
		.teardown_what = "closing the counters and detaching the probes",
	};
	int ret;

	memset(sides, 0, sizeof(sides));
	ret = frame_parse(&c.f, &stat_frame, argc, argv, on_opt, &c);
	if (ret) {
		cleanup(&c);
		return frame_status(ret);
	}
	ret = EXIT_USAGE;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("events go after -e: dbtap stat -e task-clock,page-faults -p PID");
		goto fail;
	}
	if (perf_event_parse_list(c.events.len ? c.events.buf : perf_event_defaults, &c.evs,
				  &c.nev))
		goto fail;
	c.sort = SORT_WALL;
	if (c.sort_arg && stat_parse_sort(c.sort_arg, &c))
		goto fail;
	if (c.nev > STAT_MAX_EVENTS) {
		error("%d events: at most %d can be counted in one run", c.nev, STAT_MAX_EVENTS);
		hint("split them over two runs");
		goto fail;
	}
	c.self_time = getenv("DBTAP_STAT_SELF_TIME") != NULL;
	if (c.usdt && c.by != SB_QUERY) {
		error("--usdt is for --by query");
		hint("--by transaction always takes the USDT probes; counting takes none");
		goto fail;
	}
	if (c.compare && c.by != SB_NONE && !stat_by_stmt(c.by)) {
		error("--compare compares totals or statements, not --by %s", stat_by_keys[c.by].name);
		hint("drop --by, or use --by query or --by transaction");
		goto fail;
	}
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true; /* the only cluster running here */
	ret = target_resolve(&sides[0].t, &c.f.to, true);
	if (ret)
		goto fail;
	sides[0].desc = strdup(target_describe(&sides[0].t));
	if (c.by == SB_TYPE && sides[0].t.kind != TARGET_PG)
		warning("--by type without --pg: processes are grouped by their command name");
	if (c.compare) {
		ret = resolve_other(&sides[1], c.compare, &c);
		if (ret)
			goto fail;
		c.nsides = 2;
	}
	ret = open_sides(&c);
	if (ret)
		goto fail;

	for (int i = 0; i < c.nsides; i++)
		if (!stat_by_stmt(c.by) && !sides[i].is_saved)
			counter_set_enable(&sides[i].cs);
	c.f.target = &sides[0].t;
	frame_start(&c.f);
	/* on stderr, once everything is attached: scripts wait for this line */
	fprintf(stderr, "counting %s%s%s%s%s\n", sides[0].desc, c.nsides > 1 ? " and " : "",
		c.nsides > 1 ? sides[1].desc : "",
		c.by != SB_QUERY ? "" :
		!strcmp(stat_probe_source(sides[0].probe), "usdt") ? " (statements from the USDT probes)" :
		" (statements from PgBackendStatus at switches, no USDT probe)",
		c.f.time.duration ? "" : "; Ctrl-C to stop");
	return frame_run(&c.f, &ops, &c);
fail:
	cleanup(&c);
	return ret;
}

