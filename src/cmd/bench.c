/* dbtap bench: what each probe mechanism costs on this machine (options and output). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/bpftrace.h"
#include "bench/pgbench.h"
#include "bench/run.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "target/elf.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/runloop.h"

#define MAX_ROWS 64

struct opts {
	struct frame f; /* the clock of every line's time_s, --pg */
	double duration;
	int repeats;
	int threads;
	enum bench_workload workload;
	bool vs_bpftrace;
	bool duration_set, repeats_set, quick;
	struct pgbench_opts pg;
};

enum { OPT_THREADS = FRAME_KEY_LONG, OPT_WORKLOAD, OPT_VS_BPFTRACE, OPT_QUICK };

static const struct frame_opt bench_opts[] = {
	FRAME_OPT_PG,
	{ "duration", 'd', required_argument, "SECS",
	  "length of one run (default 0.3; pgbench: 5)" },
	{ "repeats", 'r', required_argument, "N",
	  "runs per mechanism; median and spread over them (default 5)" },
	{ "threads", OPT_THREADS, required_argument, "N", "workload threads calling the site (default 1)" },
	{ "workload", OPT_WORKLOAD, required_argument, "trig|math",
	  "trig: call the site in a tight loop (default);\n"
	  "math: 500 sin/cos/sqrt iterations, then one call" },
	{ "vs-bpftrace", OPT_VS_BPFTRACE, no_argument, NULL, "also count each site with bpftrace, side by side" },
	{ "quick", OPT_QUICK, no_argument, NULL, "-d 0.1 -r 1 (checks every attach path in seconds)" },
	{ "clients", 'c', required_argument, "N", "pgbench: client connections (default 4)" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

/* The mechanism list is the table's own: --help shows what bench_mechs holds. */
static char about[4096];

static const struct frame_cmd bench_frame = {
	.name = "bench",
	.args = "[MECHANISM...]",
	.more = "dbtap bench pgbench [--pg [TARGET]] [-d SECS] [-r REPEATS] [-c CLIENTS] [-j]",
	.about = about,
	.examples =
		"  dbtap bench                          every mechanism, 5 x 0.3 s each\n"
		"  dbtap bench uprobe-nop watchpoint    two mechanisms against the baseline\n"
		"  dbtap bench --workload math          the overhead blog's loop: loss in %\n"
		"  dbtap bench --vs-bpftrace uprobe-nop dbtap's handler beside bpftrace's\n"
		"  dbtap bench pgbench --pg /var/lib/postgresql/15/main\n",
	.opts = bench_opts,
};

static void about_fill(void)
{
	int n = snprintf(about, sizeof(about),
		"Measures what one probe hit costs here: a child process calls a site with a\n"
		"known first instruction in a loop and counts its calls; each mechanism is\n"
		"attached with dbtap's counting handler and with an empty BPF program (the floor),\n"
		"and the handler's count must equal the workload's own count.\n\n"
		"pgbench: pgbench TPS on a cluster untraced, then with 'dbtap tps' and\n"
		"'dbtap watch xid' (trap and poll) attached (see docs/bench.md).\n\n"
		"mechanisms (default: all; --workload math: uprobe-nop, uprobe-mov, watchpoint):\n");
	for (int i = 0; i < bench_nmechs && n > 0 && (size_t)n < sizeof(about); i++)
		n += snprintf(about + n, sizeof(about) - n, "  %-16s %s\n", bench_mechs[i].name,
			      bench_mechs[i].what);
}

/* A bad value on the command line: error naming it, the hint, exit 2. */
static int bad_value(const char *what, const char *arg, const char *expect)
{
	error("bad %s '%s'", what, arg);
	hint("%s; see 'dbtap bench --help'", expect);
	return EXIT_USAGE;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int bad_mechanism(const char *name)
{
	const char *best = NULL;
	int bestd = 4;
	for (int i = 0; i < bench_nmechs; i++) {
		int d = edit_distance(name, bench_mechs[i].name);
		if (d < bestd) {
			bestd = d;
			best = bench_mechs[i].name;
		}
	}
	error("unknown mechanism '%s'", name);
	if (best)
		hint("did you mean '%s'? 'dbtap bench --help' lists them all", best);
	else
		hint("'dbtap bench --help' lists the mechanisms");
	return EXIT_USAGE;
}

static void print_config(const struct opts *o, const char *btver)
{
	struct utsname u;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	uname(&u);
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin_kind(&j, "config", frame_time_s(&o->f));
		json_str(&j, "workload", o->workload == WORKLOAD_MATH ? "math" : "trig");
		json_int(&j, "threads", o->threads);
		json_int(&j, "repeats", o->repeats);
		json_double(&j, "run_s", o->duration);
		json_str(&j, "kernel", u.release);
		json_str(&j, "arch", u.machine);
		json_int(&j, "cpus", ncpu);
		json_str(&j, "bpftrace", btver);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		return;
	}
	printf("dbtap bench: %s workload, %d thread%s, %d x %.2g s per mechanism; "
	       "Linux %s %s, %ld cpus%s%s\n",
	       o->workload == WORKLOAD_MATH ? "math" : "trig", o->threads, o->threads > 1 ? "s" : "",
	       o->repeats, o->duration, u.release, u.machine, ncpu, btver ? "; " : "",
	       btver ? btver : "");
}

static void print_row_json(const struct bench_row *rows, int n, const struct bench_row *r,
			   const struct bench_row *base, const struct opts *o)
{
	struct json j;

	json_init(&j);
	frame_json_begin_kind(&j, "row", frame_time_s(&o->f));
	json_str(&j, "mechanism", r->mech->name);
	json_str(&j, "program", bench_prog_name(r->prog));
	json_str(&j, "what", r->mech->what);
	json_bool(&j, "available", r->available);
	if (!r->available) {
		json_str(&j, "reason", r->reason);
	} else {
		json_int(&j, "samples", r->n);
		json_double(&j, "events_per_sec", r->rate_median);
		json_double(&j, "wall_events_per_sec", r->wall_rate_median);
		json_double(&j, "ns_per_event", r->ns_median);
		if (base && base != r)
			json_double(&j, "ns_over_baseline", r->ns_median - base->ns_median);
		else
			json_null(&j, "ns_over_baseline");
		json_double(&j, "spread_pct", r->ns_spread_pct);
		json_uint(&j, "iterations", r->iterations);
		if (r->counted) {
			json_uint(&j, "count", r->count);
			json_bool(&j, "verified", r->verified);
		} else {
			json_null(&j, "count");
			json_null(&j, "verified");
		}
		if (o->workload == WORKLOAD_MATH) {
			if (base && base != r)
				json_double(&j, "loss_pct", bench_row_loss_pct(r, base));
			else
				json_null(&j, "loss_pct");
		}
		if (r->prog == PROG_HANDLER || r->prog == PROG_EMPTY) {
			json_double(&j, "prog_ns", bench_row_prog_ns(r));
			if (r->stats.prog_stats) {
				json_uint(&j, "prog_runs", r->stats.prog_runs);
				json_uint(&j, "prog_iterations", r->stats.iterations);
				json_bool(&j, "prog_verified", r->stats_verified);
			} else {
				json_null(&j, "prog_runs");
				json_null(&j, "prog_iterations");
				json_null(&j, "prog_verified");
			}
		}
		if (r->prog == PROG_HANDLER) {
			json_double(&j, "handler_added_pct", bench_row_handler_added_pct(rows, n, r));
			json_double(&j, "vs_empty_pct", bench_row_vs_empty_pct(rows, n, r));
			json_double(&j, "vs_bpftrace", bench_row_vs_bpftrace(rows, n, r));
		}
	}
	json_object_end(&j);
	json_flush_line(&j, stdout);
	json_release(&j);
}

/*
 * One line under 100 columns: the count check is "ok" or "MISMATCH" (the counts are in
 * the JSON and in the error); the last three columns are the handler against the
 * empty program (its own run time, end to end) and against bpftrace.
 */
static void print_row_text(const struct bench_row *rows, int n, const struct bench_row *r,
			   const struct bench_row *base, const struct opts *o)
{
	char over[32] = "-", check[16] = "-", prog[32] = "-", ha_s[16] = "", ve_s[16] = "";
	char vb_s[16] = "";

	if (!r->available) {
		printf("%-15s %-8s  not available: %s\n", r->mech->name, bench_prog_name(r->prog),
		       r->reason);
		return;
	}
	if (base && base != r) {
		if (o->workload == WORKLOAD_MATH)
			snprintf(over, sizeof(over), "%.1f%%", bench_row_loss_pct(r, base));
		else
			snprintf(over, sizeof(over), "%.1f", r->ns_median - base->ns_median);
	}
	if (r->counted)
		snprintf(check, sizeof(check), "%s", r->verified ? "ok" : "MISMATCH");
	if (!isnan(bench_row_prog_ns(r)))
		snprintf(prog, sizeof(prog), "%.1f%s", bench_row_prog_ns(r), r->stats_verified ? "" : "!");
	double ha = bench_row_handler_added_pct(rows, n, r), ve = bench_row_vs_empty_pct(rows, n, r);
	double vb = bench_row_vs_bpftrace(rows, n, r);
	if (!isnan(ha))
		snprintf(ha_s, sizeof(ha_s), "%+.1f%%", ha);
	if (!isnan(ve))
		snprintf(ve_s, sizeof(ve_s), "%+.1f%%", ve);
	if (!isnan(vb))
		snprintf(vb_s, sizeof(vb_s), "%.2fx", vb);
	char line[256];
	bool math = o->workload == WORKLOAD_MATH;
	int len = snprintf(line, sizeof(line),
			   math ? "%-15s %-8s %8.1f %8.0f %7s %6.1f%% %7s  %-8s %7s %7s %6s"
				: "%-15s %-8s %8.3f %8.1f %7s %6.1f%% %7s  %-8s %7s %7s %6s",
			   r->mech->name, bench_prog_name(r->prog),
			   r->rate_median / (math ? 1e3 : 1e6), r->ns_median, over, r->ns_spread_pct,
			   prog, check, ha_s, ve_s, vb_s);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = 0;
	puts(line);
}

/* The cheapest verified row among the named mechanisms (NULL-terminated list). */
static const struct bench_row *cheapest(const struct bench_row *rows, int n,
					const char *const *names)
{
	const struct bench_row *best = NULL;
	for (int i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];
		if (!r->available || !r->n || !r->verified || r->prog == PROG_BPFTRACE)
			continue;
		for (const char *const *m = names; *m; m++)
			if (!strcmp(r->mech->name, *m) && (!best || r->ns_median < best->ns_median))
				best = r;
	}
	return best;
}

static void print_answer(const struct bench_row *rows, int n, const struct bench_row *base,
			 const struct opts *o, int mismatches, bool interrupted)
{
	static const char *const call[] = { "uprobe-nop", "uprobe-push", "uprobe-nop5", "usdt",
					    "usdt-semaphore", NULL };
	static const char *const entry[] = { "uprobe-nop", "uprobe-push", "uprobe-nop5", NULL };
	static const char *const watch[] = { "watchpoint", NULL };
	static const char *const onstore[] = { "uprobe-mov", NULL };
	/*
	 * PostgreSQL's functions (built with frame pointers or not, they save a register
	 * first) start with push %rbp: uprobe-push is the row that predicts a uprobe on a
	 * server function; nop and nop5 entries are this workload's, rarely a server's.
	 * USDT sites are a nop.
	 */
	static const char *const server[] = { "uprobe-push", NULL };
	static const char *const site[] = { "usdt", NULL };
	const struct bench_row *c = cheapest(rows, n, call);
	const struct bench_row *sf = cheapest(rows, n, server);
	const struct bench_row *us = cheapest(rows, n, site);
	const struct bench_row *u = sf ? sf : cheapest(rows, n, entry);
	const struct bench_row *w = cheapest(rows, n, watch);
	const struct bench_row *s = cheapest(rows, n, onstore);
	bool math = o->workload == WORKLOAD_MATH;

	if (global.json) {
		struct json j;
		double now = frame_time_s(&o->f); /* one reading: duration_s equals time_s */
		struct frame_report r = {
			.kind = FRAME_SUMMARY,
			.time_s = now,
			.span_s = now,
			.end = interrupted ? "interrupted" : "duration",
		};
		json_init(&j);
		frame_json_begin(&j, &r);
		const struct bench_row *pick[] = { sf, us, c, u, w, s };
		const char *key[] = { "server_function", "usdt_site", "call", "write_uprobe",
				      "write_watchpoint", "write_on_store" };
		for (int i = 0; i < 6; i++) {
			if (!pick[i]) {
				json_null(&j, key[i]);
				continue;
			}
			json_object_begin(&j, key[i]);
			json_str(&j, "mechanism", pick[i]->mech->name);
			json_str(&j, "program", bench_prog_name(pick[i]->prog));
			json_double(&j, "ns_per_event", pick[i]->ns_median);
			if (base)
				json_double(&j, "ns_over_baseline", pick[i]->ns_median - base->ns_median);
			if (math && base)
				json_double(&j, "loss_pct", bench_row_loss_pct(pick[i], base));
			json_object_end(&j);
		}
		json_int(&j, "mismatches", mismatches);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		return;
	}
	printf("\n");
	if (interrupted)
		printf("interrupted: the figures cover the runs that finished\n");
	if (math && base) {
		if (u)
			printf("the math loop loses %.1f%% of its throughput to %s",
			       bench_row_loss_pct(u, base), u->mech->name);
		if (s)
			printf("%s%.1f%% to %s", u ? ", " : "the math loop loses ",
			       bench_row_loss_pct(s, base), s->mech->name);
		if (w)
			printf("%s%.1f%% to a watchpoint", u || s ? ", " : "the math loop loses ",
			       bench_row_loss_pct(w, base));
		if (u || s || w)
			printf("\n");
		return;
	}
	double b = base ? base->ns_median : 0;
	if (sf)
		printf("server functions start with push %%rbp: %s, %.0f ns per call over the "
		       "baseline\n", sf->mech->name, sf->ns_median - b);
	else
		printf("server functions start with push %%rbp: run uprobe-push to measure "
		       "their uprobe cost\n");
	if (us)
		printf("USDT sites are a nop: %s, %.0f ns per hit over the baseline\n",
		       us->mech->name, us->ns_median - b);
	if (c && c != sf && c != us)
		printf("cheapest here: %s, %.0f ns per call, for functions that start as its site "
		       "does\n", c->mech->name, c->ns_median - b);
	if (u && w) {
		if (u->ns_median <= w->ns_median)
			printf("count a variable's writes: a uprobe at the entry of the function that writes"
			       " it (%s, %.0f ns) beats a watchpoint (%.0f ns) by %.1fx\n", u->mech->name,
			       u->ns_median - b, w->ns_median - b, (w->ns_median - b) / (u->ns_median - b));
		else
			printf("count a variable's writes: a watchpoint (%.0f ns) beats a uprobe at the entry"
			       " of the function that writes it (%s, %.0f ns) by %.1fx\n", w->ns_median - b,
			       u->mech->name, u->ns_median - b, (u->ns_median - b) / (w->ns_median - b));
	} else if (w) {
		printf("count a variable's writes: a watchpoint, %.0f ns per write\n", w->ns_median - b);
	}
	if (s)
		printf("a uprobe on the store instruction itself is single-stepped: %.0f ns\n",
		       s->ns_median - b);
}

static int run_table(struct opts *o, char **mechs, int nmechs)
{
	struct bench_row rows[MAX_ROWS];
	struct bench_env env;
	int nrows = 0, rc = EXIT_OK, mismatches = 0;
	bool selected[64] = { false }, interrupted = false;
	char btver[64] = "";

	for (int i = 0; i < nmechs; i++) {
		const struct bench_mech *m = bench_mech_find(mechs[i]);
		if (!m)
			return bad_mechanism(mechs[i]);
		selected[m - bench_mechs] = true;
	}
	if (!nmechs) {
		for (int i = 0; i < bench_nmechs; i++)
			selected[i] = o->workload == WORKLOAD_TRIG ||
				      !strcmp(bench_mechs[i].name, "uprobe-nop") ||
				      !strcmp(bench_mechs[i].name, "uprobe-mov") ||
				      !strcmp(bench_mechs[i].name, "watchpoint");
	}
	/* Every figure is also given over the baseline, so it always runs. */
	selected[0] = true;

	if (bench_env_init(&env, o->workload, o->threads, o->duration))
		return EXIT_FAIL;
	if (o->vs_bpftrace) {
		env.bpftrace = bpftrace_find();
		if (!env.bpftrace) {
			error("--vs-bpftrace: bpftrace is not installed (not found on PATH)");
			hint("install it ('make deps' or apt-get install bpftrace), or run without --vs-bpftrace");
			bench_env_free(&env);
			return EXIT_FAIL;
		}
		if (bpftrace_version(env.bpftrace, btver, sizeof(btver)))
			snprintf(btver, sizeof(btver), "bpftrace");
	}

	for (int i = 0; i < bench_nmechs; i++) {
		const struct bench_mech *m = &bench_mechs[i];
		if (!selected[i])
			continue;
		if (m->attach == ATTACH_NONE || m->attach == ATTACH_WATCHPOINT)
			bench_row_init(&rows[nrows++], m, PROG_NONE, o->repeats);
		if (m->attach != ATTACH_NONE) {
			bench_row_init(&rows[nrows++], m, PROG_HANDLER, o->repeats);
			bench_row_init(&rows[nrows++], m, PROG_EMPTY, o->repeats);
			if (o->vs_bpftrace)
				bench_row_init(&rows[nrows++], m, PROG_BPFTRACE, o->repeats);
		}
	}

	print_config(o, btver[0] ? btver : NULL);
	if (!global.json && isatty(2))
		fprintf(stderr, "measuring %d rows x %d repeats of %.2g s...\n", nrows, o->repeats,
			o->duration);

	if (bench_measure(&env, rows, nrows, o->repeats, &interrupted))
		rc = EXIT_FAIL;
	bench_env_free(&env);

	const struct bench_row *base = NULL;
	for (int i = 0; i < nrows; i++) {
		if (rows[i].mech == &bench_mechs[0] && rows[i].n > 0)
			base = &rows[i];
	}
	if (!global.json) {
		printf("%-15s %-8s %8s %8s %7s %7s %7s  %-8s %7s %7s %s\n", "mechanism", "program",
		       o->workload == WORKLOAD_MATH ? "k it/s" : "M ev/s",
		       o->workload == WORKLOAD_MATH ? "ns/iter" : "ns/event",
		       o->workload == WORKLOAD_MATH ? "loss" : "+ns", "spread", "prog ns", "check",
		       "h-prog", "h-e2e", "h/bpft");
	}
	for (int i = 0; i < nrows; i++) {
		const struct bench_row *r = &rows[i];
		if (r->available && !r->n)
			continue; /* interrupted before its first run */
		if (global.json)
			print_row_json(rows, nrows, r, base, o);
		else
			print_row_text(rows, nrows, r, base, o);
		if (r->available && r->counted && !r->verified)
			mismatches++;
		if (r->available && r->stats.prog_stats && !r->stats_verified)
			mismatches++;
	}
	print_answer(rows, nrows, base, o, mismatches, interrupted);

	for (int i = 0; i < nrows; i++) {
		const struct bench_row *r = &rows[i];
		if (r->available && r->counted && !r->verified) {
			if (r->prog == PROG_BPFTRACE) {
				warning("bpftrace counted %llu hits of %s, the workload made %llu calls:"
					" its figures on that row are not comparable",
					(unsigned long long)r->count, r->mech->name,
					(unsigned long long)r->iterations);
				if (r->mech->attach == ATTACH_WATCHPOINT && o->threads > 1)
					hint("bpftrace -p puts its watchpoint on one thread only");
				continue;
			}
			error("%s (%s program) counted %llu hits, the workload made %llu calls",
			      r->mech->name, bench_prog_name(r->prog), (unsigned long long)r->count,
			      (unsigned long long)r->iterations);
			hint("a probe missed or double-counted hits: its figures are not to be trusted;"
			     " rerun with -v to see libbpf's messages");
			rc = EXIT_FAIL;
		}
		if (r->available && r->stats.prog_stats && !r->stats_verified) {
			error("the %s program on %s ran %llu times, the workload made %llu calls",
			      bench_prog_name(r->prog), r->mech->name,
			      (unsigned long long)r->stats.prog_runs,
			      (unsigned long long)r->stats.iterations);
			hint("another program of this dbtap ran at the same time, or hits were lost;"
			     " rerun with -v");
			rc = EXIT_FAIL;
		}
	}
	for (int i = 0; i < nrows; i++)
		bench_row_free(&rows[i]);
	return rc;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct opts *o = ctx;

	switch (key) {
	case 'd':
		o->duration = parse_seconds(arg);
		if (o->duration < 0.01 || o->duration > 3600)
			return bad_value("duration", arg, "seconds from 0.01 to 3600, e.g. 0.5"), -1;
		o->duration_set = true;
		o->pg.duration = o->duration;
		return 0;
	case 'r':
		if (parse_int(arg, 1, 1000, &o->repeats))
			return bad_value("repeat count", arg, "a whole number from 1 to 1000"), -1;
		o->repeats_set = true;
		return 0;
	case OPT_THREADS:
		if (parse_int(arg, 1, BENCH_MAX_THREADS, &o->threads))
			return bad_value("thread count", arg, "a whole number from 1 to 64"), -1;
		return 0;
	case OPT_WORKLOAD:
		if (!strcmp(arg, "trig"))
			o->workload = WORKLOAD_TRIG;
		else if (!strcmp(arg, "math"))
			o->workload = WORKLOAD_MATH;
		else
			return bad_value("workload", arg, "trig or math"), -1;
		return 0;
	case OPT_VS_BPFTRACE:
		o->vs_bpftrace = true;
		return 0;
	case OPT_QUICK:
		o->quick = true;
		return 0;
	case 'c':
		if (parse_int(arg, 1, 1000, &o->pg.clients))
			return bad_value("client count", arg, "a whole number from 1 to 1000"), -1;
		return 0;
	}
	return -1;
}

int cmd_bench(int argc, char **argv)
{
	struct opts o = { .duration = 0.3, .repeats = 5, .threads = 1, .workload = WORKLOAD_TRIG,
			  .pg = { .duration = 5, .clients = 4 } };
	int ret;

	about_fill();
	ret = frame_parse(&o.f, &bench_frame, argc, argv, on_opt, &o);
	if (ret)
		return frame_status(ret);
	/* every line's time_s counts from here; Ctrl-C ends a run with what was measured */
	frame_start(&o.f);
	if (o.quick) {
		if (!o.duration_set)
			o.duration = 0.1;
		if (!o.repeats_set)
			o.repeats = 1;
	}
	bool pgbench = optind < argc && !strcmp(argv[optind], "pgbench");
	if (o.f.to.pg_set && !pgbench) {
		error("--pg is for 'dbtap bench pgbench': the mechanism table measures its own workload");
		hint("dbtap bench pgbench --pg %s", o.f.to.pg ? o.f.to.pg : "DATADIR");
		return EXIT_USAGE;
	}
	if (pgbench) {
		if (optind + 1 < argc)
			return bad_value("argument", argv[optind + 1], "'dbtap bench pgbench' takes no mechanism");
		if (!o.duration_set && o.quick)
			o.pg.duration = 1;
		o.pg.repeats = o.repeats_set ? o.repeats : 1;
		o.pg.pg_set = o.f.to.pg_set;
		o.pg.pg = o.f.to.pg;
		return pgbench_compare(&o.pg);
	}
	return run_table(&o, argv + optind, argc - optind);
}
