/* dbtap count: hits per probe (uprobes, uretprobes, USDT, wildcards), per interval and per process. */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/count.h"
#include "cmd/cmd.h"
#include "pg/cluster.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/runloop.h"


struct prev_hit {
	struct count_key k;
	uint64_t hits;
};

/* Types of pids seen, learnt while they live. */
struct count_cmd {
	struct target t;
	struct time_opts time;
	enum by by;
	int max_probes;
	struct probe_list probes;
	struct count_probe *cp;
	uint64_t *prev, *cur;
	struct prev_hit *prev_hits; /* --by: per (probe, pid) at the last report, sorted */
	int nprev;
	struct runloop rl;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap count PROBE... [--pg [TARGET] | -p PID | -t TID] [-i SECS] [-d SECS]\n"
		"                   [--by pid|type] [--max-probes N] [-j]\n\n"
		"Counts how often functions and USDT probes fire, in the kernel (like funccount).\n\n"
		"probes:\n"
		"  usdt:[BINARY:]PROVIDER:NAME   a USDT probe (all its sites)\n"
		"  uprobe:BINARY:FUNCTION        a function's entry\n"
		"  uretprobe:BINARY:FUNCTION     a function's return\n"
		"  BINARY left out: the target's binary (with no target, the only cluster's);\n"
		"  NAME and FUNCTION take wildcards: 'uprobe:postgres:bms_*', 'usdt:postgresql:*'\n\n"
		"options:\n"
		"  --pg [TARGET]      every process of a cluster, later backends included\n"
		"  -p PID[,PID]       these processes;  -t TID  one thread\n"
		"                     (no target: every process running the binary)\n"
		"  -i, --interval S   a report every S seconds (default: only the final one)\n"
		"  -d, --duration S   stop after S seconds (default: Ctrl-C, or the target exits)\n"
		"  --by pid|type      split the counts by process, or by backend type\n"
		"  --max-probes N     allow wildcards to match up to N probes (default %d)\n"
		"  -j, --json         one JSON object per report, the last with \"summary\": true\n"
		"  -h, --help         this text\n\n"
		"examples:\n"
		"  dbtap count --pg uprobe:postgres:bms_is_member -d 5\n"
		"  dbtap count --pg 'usdt:postgresql:lwlock__*' --by type -i 1\n",
		PROBES_MAX_DEFAULT);
}

static int parse_options(struct count_cmd *c, struct target_opts *to, int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACING_LONGOPTS,
		BY_LONGOPT,
		{ "max-probes", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
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
		case 'M': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > COUNT_MAX_PROBES) {
				error("bad --max-probes '%s'", optarg);
				hint("a number from 1 to %d", COUNT_MAX_PROBES);
				return EXIT_USAGE;
			}
			c->max_probes = (int)n;
			break;
		}
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return cmd_bad_option("count", opt, argv);
		}
	}
	if (optind >= argc) {
		error("count needs at least one PROBE");
		hint("e.g. 'dbtap count --pg uprobe:postgres:bms_is_member'; see 'dbtap count --help'");
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * What a process is, into buf: for --pg the backend type from the title the kernel
 * kept at its first hit (it survives the process's exit), else from /proc; for other
 * targets the command name, or the program name from the kept title once it exited.
 */
static void type_of(struct count_cmd *c, __u32 pid, const char *title, char *buf, size_t len)
{
	struct pg_title pt;

	buf[0] = '\0';
	if (c->t.kind == TARGET_PG) {
		if (pid == (__u32)c->t.pg.postmaster)
			snprintf(buf, len, "postmaster");
		else if (title[0] && pg_title_parse_full(title, &pt) == 0)
			snprintf(buf, len, "%s", pt.type);
		else
			snprintf(buf, len, "%s", target_proc_type(&c->t, pid));
	} else if (proc_comm(pid, buf, len) < 0 && title[0]) {
		const char *base = strrchr(title, '/');
		snprintf(buf, len, "%.15s", base ? base + 1 : title);
		buf[strcspn(buf, " ")] = '\0';
	}
	if (!buf[0])
		snprintf(buf, len, "exited");
}

/* Every 200 ms: whether the target still runs. */
static bool poll_check(void *arg)
{
	struct count_cmd *c = arg;

	return c->t.kind == TARGET_NONE || target_alive(&c->t);
}

static void probe_label(const struct probe *p, char *buf, size_t len, bool full)
{
	const char *bin = p->binary, *slash = strrchr(bin, '/');

	if (!full && slash)
		bin = slash + 1;
	if (p->kind == PROBE_USDT)
		snprintf(buf, len, "usdt:%s:%s:%s", bin, p->provider, p->name);
	else
		snprintf(buf, len, "%s:%s:%s", probe_kind_name(p->kind), bin, p->name);
}

/* One split row: a pid, or a type with its pids summed. */
struct split {
	__u32 probe, pid;
	char type[64];
	uint64_t hits;
};

static int cmp_split(const void *a, const void *b)
{
	const struct split *x = a, *y = b;

	if (x->probe != y->probe)
		return x->probe < y->probe ? -1 : 1;
	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_prev(const void *a, const void *b)
{
	const struct prev_hit *x = a, *y = b;

	if (x->k.probe != y->k.probe)
		return x->k.probe < y->k.probe ? -1 : 1;
	return x->k.pid < y->k.pid ? -1 : x->k.pid > y->k.pid;
}

static int collect_splits(struct count_cmd *c, bool summary, struct split **out)
{
	struct count_key *k = NULL;
	struct count_val *v = NULL;
	int n = count_probe_read_pids(c->cp, &k, &v), ns = 0;
	struct split *s = calloc(n > 0 ? n : 1, sizeof(*s));

	for (int i = 0; i < n; i++) {
		uint64_t d = v[i].hits;
		if (!summary && c->nprev) {
			struct prev_hit key = { .k = k[i] }, *pv;
			pv = bsearch(&key, c->prev_hits, c->nprev, sizeof(key), cmp_prev);
			if (pv)
				d -= pv->hits;
		}
		if (!d)
			continue;
		char type[64];
		type_of(c, k[i].pid, v[i].title, type, sizeof(type));
		if (c->by == BY_TYPE) {
			int j;
			for (j = 0; j < ns; j++)
				if (s[j].probe == k[i].probe && !strcmp(s[j].type, type))
					break;
			if (j < ns) {
				s[j].hits += d;
				continue;
			}
		}
		s[ns].probe = k[i].probe;
		s[ns].pid = k[i].pid;
		snprintf(s[ns].type, sizeof(s[ns].type), "%s", type);
		s[ns++].hits = d;
	}
	if (!summary) {
		c->prev_hits = realloc(c->prev_hits, (n > 0 ? n : 1) * sizeof(*c->prev_hits));
		for (int i = 0; i < n; i++) {
			c->prev_hits[i].k = k[i];
			c->prev_hits[i].hits = v[i].hits;
		}
		c->nprev = n;
		qsort(c->prev_hits, n, sizeof(*c->prev_hits), cmp_prev);
	}
	free(k);
	free(v);
	qsort(s, ns, sizeof(*s), cmp_split);
	*out = s;
	return ns;
}

static void report(struct count_cmd *c, bool summary)
{
	int n = c->probes.n, ns = 0;
	uint64_t *d = calloc(n, sizeof(*d)), total = 0;
	struct split *s = NULL;
	double secs;

	if (count_probe_read(c->cp, c->cur) < 0) {
		warning("cannot read the count map");
		free(d);
		return;
	}
	secs = summary ? runloop_total(&c->rl) : runloop_elapsed(&c->rl);
	for (int i = 0; i < n; i++) {
		d[i] = summary ? c->cur[i] : c->cur[i] - c->prev[i];
		total += d[i];
	}
	if (!summary)
		memcpy(c->prev, c->cur, n * sizeof(*c->cur));
	if (c->by != BY_NONE)
		ns = collect_splits(c, summary, &s);

	if (global.json) {
		struct json j;
		char label[1024];

		json_init(&j);
		json_object_begin(&j, NULL);
		if (summary)
			json_bool(&j, "summary", true);
		json_double(&j, "time", runloop_total(&c->rl));
		json_double(&j, summary ? "duration" : "interval", secs);
		json_uint(&j, "total", total);
		json_array_begin(&j, "probes");
		for (int i = 0; i < n; i++) {
			const struct probe *p = &c->probes.p[i];
			probe_label(p, label, sizeof(label), true);
			json_object_begin(&j, NULL);
			json_str(&j, "probe", label);
			json_str(&j, "kind", probe_kind_name(p->kind));
			json_str(&j, "binary", p->binary);
			if (p->kind == PROBE_USDT)
				json_str(&j, "provider", p->provider);
			json_str(&j, "name", p->name);
			json_uint(&j, "hits", d[i]);
			json_double(&j, "rate", secs > 0 ? d[i] / secs : 0.0);
			if (c->by != BY_NONE) {
				json_array_begin(&j, c->by == BY_PID ? "pids" : "types");
				for (int k = 0; k < ns; k++) {
					if (s[k].probe != (__u32)i)
						continue;
					json_object_begin(&j, NULL);
					if (c->by == BY_PID)
						json_int(&j, "pid", s[k].pid);
					json_str(&j, "type", s[k].type);
					json_uint(&j, "hits", s[k].hits);
					json_object_end(&j);
				}
				json_array_end(&j);
			}
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		char ts[16], label[512];
		time_t now = time(NULL);

		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		if (summary)
			printf("\ntotal over %.1f s:\n", secs);
		else
			printf("%s\n", ts);
		printf("  %-52s %12s %12s\n", "PROBE", "HITS", "PER_SEC");
		for (int i = 0; i < n; i++) {
			/* Intervals list the probes that fired; the summary lists them all. */
			if (!summary && !d[i])
				continue;
			probe_label(&c->probes.p[i], label, sizeof(label), false);
			printf("  %-52s %12" PRIu64 " %12.1f\n", label, d[i], secs > 0 ? d[i] / secs : 0.0);
			for (int k = 0; k < ns; k++) {
				if (s[k].probe != (__u32)i)
					continue;
				if (c->by == BY_PID)
					printf("    pid %-8u %-37.37s %12" PRIu64 "\n", s[k].pid, s[k].type, s[k].hits);
				else
					printf("    %-48.48s %12" PRIu64 "\n", s[k].type, s[k].hits);
			}
		}
	}
	free(s);
	free(d);
}

/* Whether any PROBE word (argv[optind..]) leaves its binary to the target. */
static bool needs_default_binary(int argc, char **argv)
{
	bool need = false;

	for (int i = optind; i < argc && !need; i++) {
		struct probespec s;
		if (probespec_parse(argv[i], &s) == 0) {
			need = !s.binary;
			probespec_free(&s);
		}
	}
	return need;
}

int cmd_count(int argc, char **argv)
{
	struct count_cmd c = { .max_probes = PROBES_MAX_DEFAULT };
	struct target_opts to = { 0 };
	const char *binary;
	int ret;

	ret = parse_options(&c, &to, argc, argv);
	if (ret)
		return ret;
	/* A probe that names no binary means the server's: default to the only cluster. */
	if (!to.pg_set && !to.pids && !to.tid && needs_default_binary(argc, argv))
		to.pg_set = true;
	ret = target_resolve(&c.t, &to, false);
	if (ret)
		return ret;
	if (c.by == BY_TYPE && c.t.kind != TARGET_PG)
		warning("--by type without --pg: processes are grouped by their command name");
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	for (int i = optind; i < argc; i++) {
		struct probespec s;
		ret = probespec_parse(argv[i], &s);
		if (!ret)
			ret = probespec_resolve(&s, binary, c.max_probes, &c.probes);
		probespec_free(&s);
		if (ret)
			goto out;
	}
	c.cp = count_probe_open(&c.t, &c.probes, c.by != BY_NONE);
	if (!c.cp) {
		ret = EXIT_FAIL;
		goto out;
	}
	c.prev = calloc(c.probes.n, sizeof(*c.prev));
	c.cur = calloc(c.probes.n, sizeof(*c.cur));

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	runloop_init(&c.rl, c.time.interval, c.time.duration);
	fprintf(stderr, "tracing %d probe%s in %s; Ctrl-C to stop\n", count_probe_nlinks(c.cp),
		count_probe_nlinks(c.cp) == 1 ? "" : "s",
		c.t.kind == TARGET_NONE ? "every process" : target_describe(&c.t));
	for (;;) {
		enum runloop_event ev = runloop_wait(&c.rl, 200, poll_check, &c);
		if (ev == RUNLOOP_TICK) {
			report(&c, false);
			continue;
		}
		if (c.t.kind != TARGET_NONE && !target_alive(&c.t))
			warning("%s exited; stopping", target_describe(&c.t));
		break;
	}
	if (c.time.interval > 0)
		report(&c, false);
	report(&c, true);
	ret = EXIT_OK;
out:
	count_probe_destroy(c.cp);
	probe_list_free(&c.probes);
	target_free(&c.t);
	free(c.prev);
	free(c.cur);
	free(c.prev_hits);
	return ret;
}
