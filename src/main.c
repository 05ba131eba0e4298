/* dbtap: entry point, global options and the command table (git.c / bpftool main.c). */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cmd/cmd.h"
#include "util/error.h"
#include "util/phase.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "doctor",  cmd_doctor,  "what this machine and a target allow, and how to fix what is missing" },
	{ "pg",      cmd_pg,      "PostgreSQL clusters running here, and which process is what" },
	{ "watch",   cmd_watch,   "writes to a variable (xid, oid, SYMBOL, 0xADDR) per second and by whom" },
	{ "tps",     cmd_tps,     "transactions per second and their latency, per connection" },
	{ "latency", cmd_latency, "time between two probes (USDT, uprobe, uretprobe), or per query" },
	{ "count",   cmd_count,   "how often functions and USDT probes fire" },
	{ "stat",    cmd_stat,    "performance counters per process, thread, query or transaction" },
	{ "profile", cmd_profile, "where the CPU time goes, by stack: text, folded, flame graph" },
	{ "record",  cmd_record,  "the flight recorder: keeps the last minute, captures it when slow" },
	{ "wait",    cmd_wait,    "where backends' time goes: CPU and each wait event, in seconds, by query" },
	{ "bench",   cmd_bench,   "what each probe mechanism costs on this machine" },
	{ "serve",   cmd_serve,   "the same figures for Prometheus: /metrics, OpenMetrics, textfile" },
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap [-j|--json] [-v|--verbose] COMMAND [OPTIONS]\n"
		"       dbtap COMMAND --help\n"
		"       dbtap --version\n\n"
		"Trace a running PostgreSQL (or any process) from outside: eBPF, USDT,\n"
		"uprobes, hardware watchpoints and performance counters, no compiler needed.\n\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\ntargets (every tracing command):\n"
		"  --pg TARGET      every process of a PostgreSQL cluster, later forks included;\n"
		"                   TARGET is a data directory, a port or a postmaster pid, or\n"
		"                   nothing when exactly one cluster runs\n"
		"  -p PID[,PID]     those processes and all their threads\n"
		"  -t TID           one thread\n\n"
		"examples:\n"
		"  dbtap doctor                 what can be traced here\n"
		"  dbtap pg                     list clusters and their processes\n"
		"  dbtap watch xid --by pid     XIDs assigned per second, by backend\n"
		"  dbtap tps --by pid           per-connection TPS and latency histogram\n"
		"  dbtap bench                  cost of uprobes, USDT and watchpoints here\n");
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !global.verbose)
		return 0;
	if (!global.verbose)
		return 0; /* dbtap reports failures itself, with a hint */
	return vfprintf(error_stream(), fmt, ap); /* held with the thread's own messages */
}

int main(int argc, char **argv)
{
	int i = 1;

	phase_mark("main");
	/*
	 * One malloc arena: the threads that load probes and read symbols beside the main
	 * one live for a moment each, and an arena of their own per thread left 1-2 MB of
	 * its pages behind for the whole run.
	 */
	mallopt(M_ARENA_MAX, 1);
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
			printf("dbtap %s (libbpf %s)\n", DBTAP_VERSION, libbpf_version_string());
			return EXIT_OK;
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			global_opt('j');
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			global_opt('v');
		} else {
			error("unknown option '%s'", a);
			hint("see 'dbtap --help'");
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		print_usage(stderr);
		return EXIT_USAGE;
	}

	libbpf_set_print(libbpf_print);
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name))
			continue;
		/*
		 * The one place getopt is reset for a command's own parse (git's
		 * run_builtin): 0 makes glibc start over, as on a first call.
		 */
		optind = 0;
		opterr = 0;
		return commands[c].fn(argc - i, argv + i);
	}

	error("unknown command '%s'", argv[i]);
	hint("commands: doctor, pg, watch, tps, latency, count, stat, wait, bench; see 'dbtap --help'");
	return EXIT_USAGE;
}
