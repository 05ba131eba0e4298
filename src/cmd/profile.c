/* dbtap profile: where the CPU time (or any event) goes, by stack, as text, JSON, folded stacks or a flame graph. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/tracepoint.h"
#include "cmd/cmd.h"
#include "perf/event.h"
#include "perf/sample.h"
#include "profile/engine.h"
#include "report/flame.h"
#include "report/folded.h"
#include "report/stackset.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/runloop.h"

#define DEFAULT_HZ  99
#define DEFAULT_TOP 15

struct profile_cmd {
	struct target t;
	struct time_opts time;
	bool all;             /* -a */
	long hz;              /* -F, 0 when not given */
	long long period;     /* -c, 0 when not given */
	const char *event;    /* -e */
	const char *tracepoint;
	char tp_name[128];
	struct perf_event_desc ev;
	enum prof_by by;
	bool by_set;
	bool user_only, kernel_only;
	bool folded;          /* --folded: folded stacks on stdout */
	bool reverse;
	const char *out;      /* -o FILE.svg | FILE.folded */
	int top;
	struct prof_engine *e;
	struct runloop rl;
	struct u64map prev;   /* key hash -> count at the last interval report */
	bool exited;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dbtap profile [--pg [TARGET] | -p PID[,PID] | -t TID | -a] [-F HZ | -c N]\n"
		"                     [-e EVENT] [-d SECS] [-i SECS] [--by pid|type|thread]\n"
		"                     [--user | --kernel] [--top N] [--folded] [-o FILE] [-j]\n\n"
		"Samples stacks on CPU (or at each EVENT) and counts them in the kernel; reports the\n"
		"functions where the time goes, as text, JSON, folded stacks or a flame graph.\n\n"
		"options:\n"
		"  --pg [TARGET]      every process of a cluster, later backends included\n"
		"  -p PID[,PID]       these processes and their threads;  -t TID  one thread\n"
		"  -a, --all          every process on the machine\n"
		"  -F, --freq HZ      samples per second per CPU (default %d; cpu-clock, cycles)\n"
		"  -c, --period N     one sample every N events (software events; default 1)\n"
		"  -e, --event EVENT  cpu-clock (default), cycles (needs a hardware PMU),\n"
		"                     page-faults, context-switches, cpu-migrations, ...; or a\n"
		"                     kernel tracepoint: tp:exceptions:page_fault_user,\n"
		"                     tp:sched:sched_switch (every hit a sample)\n"
		"  -d, --duration S   stop after S seconds (default: Ctrl-C, or the target exits)\n"
		"  -i, --interval S   a report every S seconds of what was sampled in it\n"
		"  --by pid|type|thread  group by process, backend type (--pg) or thread name\n"
		"  --user, --kernel   only the user or only the kernel part of the stacks\n"
		"  --top N            functions listed per group (default %d)\n"
		"  --folded           folded stacks on stdout (FlameGraph's format), no report\n"
		"  -o FILE            write FILE.svg (an interactive flame graph) or FILE.folded\n"
		"  --reverse          the flame graph leaf first (common leaf functions merge)\n"
		"  -j, --json         one JSON object per report, the last with \"summary\": true\n"
		"  -h, --help         this text\n\n"
		"examples:\n"
		"  dbtap profile --pg -d 10 -o cpu.svg\n"
		"  dbtap profile -p 1234 --by thread -d 5\n"
		"  dbtap profile --pg -e tp:exceptions:page_fault_user -d 5 --folded\n",
		DEFAULT_HZ, DEFAULT_TOP);
}

static int parse_long(const char *arg, long long min, long long max, long long *v)
{
	char *end;
	errno = 0;
	long long n = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

static int parse_options(struct profile_cmd *c, struct target_opts *to, int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACING_LONGOPTS,
		{ "all", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, 'c' },
		{ "event", required_argument, NULL, 'e' },
		{ "by", required_argument, NULL, 'b' },
		{ "user", no_argument, NULL, 'U' },
		{ "kernel", no_argument, NULL, 'K' },
		{ "top", required_argument, NULL, 'T' },
		{ "folded", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, r;
	long long v;
	int64_t maxrate = sample_max_rate();

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":" TRACING_SHORTOPTS "aF:c:e:o:h", longopts, NULL)) != -1) {
		if ((r = tracing_opt(to, &c->time, opt, argc, argv)) < 0)
			return EXIT_USAGE;
		if (r)
			continue;
		switch (opt) {
		case 'a':
			c->all = true;
			break;
		case 'F':
			if (parse_long(optarg, 1, maxrate > 0 ? maxrate - 1 : 99999, &v) < 0) {
				error("bad -F '%s'", optarg);
				hint("samples per second per CPU, from 1 to %lld "
				     "(kernel.perf_event_max_sample_rate is %lld); 99 costs little",
				     (long long)(maxrate > 0 ? maxrate - 1 : 99999), (long long)maxrate);
				return EXIT_USAGE;
			}
			c->hz = (long)v;
			break;
		case 'c':
			if (parse_long(optarg, 1, 1000000000000LL, &v) < 0) {
				error("bad -c '%s'", optarg);
				hint("one sample every N events: a positive number, e.g. -c 100");
				return EXIT_USAGE;
			}
			c->period = v;
			break;
		case 'e':
			c->event = optarg;
			break;
		case 'b':
			c->by_set = true;
			if (!strcmp(optarg, "pid"))
				c->by = PROF_BY_PID;
			else if (!strcmp(optarg, "type"))
				c->by = PROF_BY_TYPE;
			else if (!strcmp(optarg, "thread"))
				c->by = PROF_BY_THREAD;
			else {
				error("bad --by '%s'", optarg);
				hint("--by pid (each process), --by type (backend types) or --by "
				     "thread (each thread, with its name)");
				return EXIT_USAGE;
			}
			break;
		case 'U':
			c->user_only = true;
			break;
		case 'K':
			c->kernel_only = true;
			break;
		case 'T':
			if (top_opt(&c->top, optarg, "functions") < 0)
				return EXIT_USAGE;
			break;
		case 'f':
			c->folded = true;
			break;
		case 'o':
			c->out = optarg;
			break;
		case 'r':
			c->reverse = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return cmd_bad_option("profile", opt, argv);
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("profile takes options only; see 'dbtap profile --help'");
		return EXIT_USAGE;
	}
	if (c->user_only && c->kernel_only) {
		error("--user and --kernel together leave nothing to sample");
		hint("give one of them, or neither for whole stacks");
		return EXIT_USAGE;
	}
	if (c->hz && c->period) {
		error("-F and -c both given");
		hint("-F samples so many times a second, -c every N events: choose one");
		return EXIT_USAGE;
	}
	if (c->out) {
		size_t l = strlen(c->out);
		if (!(l > 4 && !strcmp(c->out + l - 4, ".svg")) &&
		    !(l > 7 && !strcmp(c->out + l - 7, ".folded"))) {
			error("cannot tell what to write to '%s'", c->out);
			hint("-o FILE.svg writes a flame graph, -o FILE.folded folded stacks");
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* -e and -F/-c into the perf event (or tracepoint) to sample on. */
static int resolve_event(struct profile_cmd *c)
{
	const char *name = c->event ? c->event : "cpu-clock";

	if (!strncmp(name, "tp:", 3)) {
		const char *rest = name + 3, *colon = strchr(rest, ':');
		const char *tp = colon ? colon + 1 : rest;
		if (!*tp || strlen(tp) >= sizeof(c->tp_name) || (colon && colon == rest)) {
			error("bad tracepoint '%s'", name);
			hint("tp:SYSTEM:NAME, e.g. tp:sched:sched_switch or tp:exceptions:page_fault_user");
			return EXIT_USAGE;
		}
		if (c->hz || c->period) {
			error("-F and -c do not apply to tracepoint '%s'", name);
			hint("every hit of a tracepoint is a sample: drop -F/-c");
			return EXIT_USAGE;
		}
		snprintf(c->tp_name, sizeof(c->tp_name), "%s", tp);
		if (!tracepoint_exists(c->tp_name)) {
			char *close[5];
			int n = tracepoint_similar(c->tp_name, close, 5);
			error("no tracepoint '%s' in this kernel", name);
			if (n) {
				struct strbuf sb = STRBUF_INIT;
				for (int i = 0; i < n; i++) {
					strbuf_addf(&sb, "%s%s", i ? ", " : "", close[i]);
					free(close[i]);
				}
				hint("close ones: %s (the kernel's BTF lists them as btf_trace_NAME)", sb.buf);
				strbuf_release(&sb);
			} else {
				hint("the kernel's BTF (/sys/kernel/btf/vmlinux) lists its tracepoints "
				     "as btf_trace_NAME: 'bpftool btf dump file /sys/kernel/btf/vmlinux "
				     "| grep btf_trace_'");
			}
			return EXIT_USAGE;
		}
		c->tracepoint = c->tp_name;
		snprintf(c->ev.name, sizeof(c->ev.name), "%.*s", (int)sizeof(c->ev.name) - 1, name);
		return 0;
	}
	if (perf_event_parse(name, &c->ev) < 0)
		return EXIT_USAGE;
	struct perf_event_attr *a = &c->ev.attr;
	bool clock = a->type == PERF_TYPE_SOFTWARE &&
		     (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
	if (clock) {
		/* the period of a clock event is in nanoseconds: exact, no frequency loop */
		if (c->period) {
			error("-c does not apply to '%s'", name);
			hint("clock events sample by time: -F HZ");
			return EXIT_USAGE;
		}
		a->sample_period = 1000000000ull / (c->hz ? c->hz : DEFAULT_HZ);
	} else if (c->ev.hardware && !c->period) {
		a->freq = 1;
		a->sample_freq = c->hz ? c->hz : DEFAULT_HZ;
	} else {
		if (c->hz && !c->ev.hardware) {
			error("-F does not apply to '%s'", name);
			hint("software events other than cpu-clock sample every N events: -c N");
			return EXIT_USAGE;
		}
		a->sample_period = c->period ? c->period : 1;
	}
	return 0;
}

static void describe_event(const struct profile_cmd *c, char *buf, size_t len)
{
	const struct perf_event_attr *a = &c->ev.attr;

	if (c->tracepoint)
		snprintf(buf, len, "%s (every hit)", c->ev.name);
	else if (a->freq)
		snprintf(buf, len, "%s at %llu Hz", c->ev.name, (unsigned long long)a->sample_freq);
	else if (a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CPU_CLOCK ||
						   a->config == PERF_COUNT_SW_TASK_CLOCK))
		snprintf(buf, len, "%s at %ld Hz", c->ev.name, c->hz ? c->hz : DEFAULT_HZ);
	else
		snprintf(buf, len, "%s every %llu", c->ev.name, (unsigned long long)a->sample_period);
}

/* Per (group, function): self and total samples, for the text and JSON reports. */
struct func {
	uint32_t group, name;
	uint64_t self, total;
};

struct group {
	uint32_t name;
	uint64_t samples;
};

struct summary {
	struct func *f;
	size_t nf;
	struct group *g;
	size_t ng;
};

static int cmp_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->total > y->total ? -1 : x->total < y->total;
}

static int cmp_total(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->self > y->self ? -1 : x->self < y->self;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

/*
 * Self and total per (root, function) from the stacks: self is the leaf frame, total
 * counts a function once per stack however often it recurses. Marks are skipped.
 */
static int summarize(const struct stack_set *ss, struct summary *s)
{
	struct u64map idx, gidx, seen;

	memset(s, 0, sizeof(*s));
	u64map_init(&idx);
	u64map_init(&gidx);
	u64map_init(&seen);
	for (size_t i = 0; i < ss->n; i++) {
		const struct stack_ent *e = &ss->v[i];
		const uint32_t *fr = ss->frames + e->off;
		if (!e->n || !e->count)
			continue;
		uint32_t g = fr[0];
		uint64_t *gv = u64map_get(&gidx, g);
		if (!gv) {
			struct group *ng = realloc(s->g, (s->ng + 1) * sizeof(*ng));
			if (!ng)
				goto fail;
			s->g = ng;
			s->g[s->ng] = (struct group){ .name = g };
			u64map_put(&gidx, g, s->ng);
			gv = u64map_get(&gidx, g);
			s->ng++;
		}
		s->g[*gv].samples += e->count;
		/* the leaf: the last frame that is a function */
		int leaf = -1;
		for (int k = e->n - 1; k >= 1; k--)
			if (ss->kinds[fr[k]] != FRAME_MARK) {
				leaf = k;
				break;
			}
		u64map_free(&seen);
		u64map_init(&seen);
		for (uint32_t k = 1; k < e->n; k++) {
			if (ss->kinds[fr[k]] == FRAME_MARK)
				continue;
			uint64_t key = (uint64_t)g << 32 | fr[k], *v = u64map_get(&idx, key);
			if (!v) {
				if (s->nf % 1024 == 0) {
					struct func *nf = realloc(s->f, (s->nf + 1024) * sizeof(*nf));
					if (!nf)
						goto fail;
					s->f = nf;
				}
				s->f[s->nf] = (struct func){ .group = g, .name = fr[k] };
				u64map_put(&idx, key, s->nf);
				v = u64map_get(&idx, key);
				s->nf++;
			}
			if (!u64map_get(&seen, fr[k])) {
				u64map_put(&seen, fr[k], 1);
				s->f[*v].total += e->count;
			}
			if ((int)k == leaf)
				s->f[*v].self += e->count;
		}
	}
	u64map_free(&idx);
	u64map_free(&gidx);
	u64map_free(&seen);
	qsort(s->g, s->ng, sizeof(*s->g), cmp_group);
	return 0;
fail:
	u64map_free(&idx);
	u64map_free(&gidx);
	u64map_free(&seen);
	return -1;
}

static uint64_t key_hash(const struct profile_key *k)
{
	return hash_bytes(k, sizeof(*k), 11);
}

/* The stacks of this report: everything so far (summary) or since the last interval. */
static int collect(struct profile_cmd *c, bool summary, struct stack_set *ss, struct prof_stats *st,
		   struct profile_counts *pc)
{
	enum prof_by by = c->by;

	memset(st, 0, sizeof(*st));
	if (prof_engine_read(c->e, pc) < 0)
		return error("cannot read the profile maps");
	prof_engine_stats(pc, st);
	for (int i = 0; i < pc->n; i++) {
		uint64_t n = pc->counts[i], h = 0, *pv = NULL;
		if (!summary) {
			h = key_hash(&pc->keys[i]);
			pv = u64map_get(&c->prev, h);
			n -= pv ? *pv : 0;
			u64map_put(&c->prev, h, pc->counts[i]);
		}
		if (n && prof_engine_add(c->e, &pc->keys[i], n, by, ss, st) < 0)
			return error("out of memory");
	}
	return 0;
}

static void print_table(const struct stack_set *ss, struct func *f, size_t nf, uint32_t g,
			uint64_t gsamples, int top, bool by_total)
{
	int shown = 0;

	printf("    %6s %6s  %s\n", "self%", "total%", by_total ? "function (by total)" : "function");
	for (size_t i = 0; i < nf && shown < top; i++) {
		if (f[i].group != g || (!by_total && !f[i].self))
			continue;
		printf("    %6.2f %6.2f  %.84s\n", 100.0 * f[i].self / gsamples,
		       100.0 * f[i].total / gsamples, stack_set_name(ss, f[i].name));
		shown++;
	}
}

static void report_text(struct profile_cmd *c, const struct stack_set *ss, const struct prof_stats *st,
			bool summary, double secs)
{
	struct summary s;
	char evd[192];
	int top = c->top ? c->top : DEFAULT_TOP;

	describe_event(c, evd, sizeof(evd));
	if (summarize(ss, &s) < 0) {
		warning("out of memory summarizing the profile");
		return;
	}
	printf("%s %.1f s: %" PRIu64 " samples of %s\n", summary ? "profile over" : "interval",
	       secs, st->samples, evd);
	for (size_t gi = 0; gi < s.ng; gi++) {
		const struct group *g = &s.g[gi];
		printf("\n  %s: %" PRIu64 " samples (%.1f%%)\n", stack_set_name(ss, g->name),
		       g->samples, st->samples ? 100.0 * g->samples / st->samples : 0.0);
		qsort(s.f, s.nf, sizeof(*s.f), cmp_self);
		print_table(ss, s.f, s.nf, g->name, g->samples, top, false);
		qsort(s.f, s.nf, sizeof(*s.f), cmp_total);
		print_table(ss, s.f, s.nf, g->name, g->samples, top, true);
	}
	if (!s.ng)
		printf("\n  no samples%s\n", c->exited ? " (the target exited)" : "");
	if (summary) {
		const struct sym_module *m;
		int nm = prof_engine_modules(c->e, &m), first = 1;
		for (int i = 0; i < nm; i++) {
			if (m[i].fp_permille < 0 || m[i].fp_permille >= 250)
				continue;
			if (first)
				printf("\nwithout frame pointers (their callers may be missing from stacks):\n");
			first = 0;
			printf("  %-40.40s %4.1f%% of its functions set one up\n", m[i].name,
			       m[i].fp_permille / 10.0);
		}
	}
	printf("\nlost %" PRIu64 " samples (counts map full %" PRIu64 ", stack map full %" PRIu64
	       "); truncated stacks: %" PRIu64 " samples\n", st->lost, st->lost_counts,
	       st->lost_stacks, st->truncated);
	if (st->ustack_err || st->kstack_err || st->stack_missing)
		printf("unwinding failed: %" PRIu64 " user, %" PRIu64 " kernel stacks; %" PRIu64
		       " samples without a stored stack\n", st->ustack_err, st->kstack_err,
		       st->stack_missing);
	if (c->exited)
		printf("the target exited during the profile\n");
	free(s.f);
	free(s.g);
}

static void json_funcs(struct json *j, const struct stack_set *ss, struct summary *s, uint32_t g,
		       uint64_t gsamples, int top)
{
	/* the union of the top by self and the top by total */
	struct u64map in;
	int shown = 0;

	u64map_init(&in);
	json_array_begin(j, "functions");
	for (int pass = 0; pass < 2; pass++) {
		qsort(s->f, s->nf, sizeof(*s->f), pass ? cmp_total : cmp_self);
		shown = 0;
		for (size_t i = 0; i < s->nf && shown < top; i++) {
			struct func *f = &s->f[i];
			if (f->group != g)
				continue;
			shown++;
			if (u64map_get(&in, f->name))
				continue;
			u64map_put(&in, f->name, 1);
			json_object_begin(j, NULL);
			json_str(j, "name", stack_set_name(ss, f->name));
			json_str(j, "kind", ss->kinds[f->name] == FRAME_KERNEL ? "kernel" :
				 ss->kinds[f->name] == FRAME_JIT ? "jit" :
				 ss->kinds[f->name] == FRAME_UNNAMED ? "unnamed" : "user");
			json_uint(j, "self", f->self);
			json_uint(j, "total", f->total);
			json_double(j, "self_pct", gsamples ? 100.0 * f->self / gsamples : 0);
			json_double(j, "total_pct", gsamples ? 100.0 * f->total / gsamples : 0);
			json_object_end(j);
		}
	}
	json_array_end(j);
	u64map_free(&in);
}

static void report_json(struct profile_cmd *c, const struct stack_set *ss, const struct prof_stats *st,
			bool summary, double secs, double sym_ms)
{
	struct summary s;
	struct json j;
	int top = c->top ? c->top : 20;

	if (summarize(ss, &s) < 0)
		return;
	json_init(&j);
	json_object_begin(&j, NULL);
	json_str(&j, "report", "profile");
	if (summary)
		json_bool(&j, "summary", true);
	json_double(&j, "time_s", runloop_total(&c->rl));
	json_double(&j, summary ? "duration_s" : "interval_s", secs);
	json_str(&j, "event", c->ev.name);
	if (!c->tracepoint && !c->ev.attr.freq && c->ev.attr.type == PERF_TYPE_SOFTWARE &&
	    (c->ev.attr.config == PERF_COUNT_SW_CPU_CLOCK || c->ev.attr.config == PERF_COUNT_SW_TASK_CLOCK))
		json_int(&j, "frequency_hz", c->hz ? c->hz : DEFAULT_HZ);
	else if (c->ev.attr.freq)
		json_int(&j, "frequency_hz", c->ev.attr.sample_freq);
	else if (!c->tracepoint)
		json_uint(&j, "period", c->ev.attr.sample_period);
	json_uint(&j, "samples", st->samples);
	json_object_begin(&j, "lost");
	json_uint(&j, "total", st->lost);
	json_uint(&j, "counts_map_full", st->lost_counts);
	json_uint(&j, "stack_map_full", st->lost_stacks);
	json_object_end(&j);
	json_uint(&j, "truncated", st->truncated);
	json_uint(&j, "user_stack_errors", st->ustack_err);
	json_uint(&j, "kernel_stack_errors", st->kstack_err);
	json_uint(&j, "stack_missing", st->stack_missing);
	if (summary) {
		json_bool(&j, "target_exited", c->exited);
		json_double(&j, "symbolize_ms", sym_ms);
		json_uint(&j, "stacks", ss->n);
	}
	json_array_begin(&j, "groups");
	for (size_t gi = 0; gi < s.ng; gi++) {
		json_object_begin(&j, NULL);
		json_str(&j, "group", stack_set_name(ss, s.g[gi].name));
		json_uint(&j, "samples", s.g[gi].samples);
		json_funcs(&j, ss, &s, s.g[gi].name, s.g[gi].samples, top);
		json_object_end(&j);
	}
	json_array_end(&j);
	if (summary) {
		const struct sym_module *m;
		int nm = prof_engine_modules(c->e, &m);
		json_array_begin(&j, "modules");
		for (int i = 0; i < nm; i++) {
			json_object_begin(&j, NULL);
			json_str(&j, "module", m[i].name);
			json_str(&j, "path", m[i].path);
			if (m[i].fp_permille >= 0)
				json_double(&j, "frame_pointer_pct", m[i].fp_permille / 10.0);
			else
				json_null(&j, "frame_pointer_pct");
			json_bool(&j, "frame_pointers", m[i].fp_permille < 0 || m[i].fp_permille >= 250);
			json_object_end(&j);
		}
		json_array_end(&j);
	}
	json_object_end(&j);
	json_flush_line(&j, stdout);
	json_release(&j);
	free(s.f);
	free(s.g);
}

static int write_output(struct profile_cmd *c, const struct stack_set *ss, double secs)
{
	size_t l = strlen(c->out);
	bool svg = l > 4 && !strcmp(c->out + l - 4, ".svg");
	char tmp[4096], sub[512], evd[192];
	FILE *f;
	int r;

	snprintf(tmp, sizeof(tmp), "%s.tmp", c->out);
	f = fopen(tmp, "w");
	if (!f) {
		error_errno("cannot write '%s'", c->out);
		hint("check that the directory exists and is writable");
		return -1;
	}
	if (svg) {
		describe_event(c, evd, sizeof(evd));
		snprintf(sub, sizeof(sub), "%s, %s, %.1f s, %llu samples", evd,
			 target_describe(&c->t), secs, (unsigned long long)ss->total);
		struct flame_opts o = { .title = c->tracepoint || c->event ? "Profile" : "CPU profile",
					.subtitle = sub, .unit = "samples", .reverse = c->reverse };
		r = flame_write_svg(ss, f, &o);
	} else {
		r = folded_write(ss, f);
	}
	if (fclose(f) != 0 || r < 0 || rename(tmp, c->out) < 0) {
		error_errno("cannot write '%s'", c->out);
		hint("check the free space of its file system");
		remove(tmp);
		return -1;
	}
	return 0;
}

static void report(struct profile_cmd *c, bool summary)
{
	struct stack_set ss;
	struct prof_stats st;
	struct profile_counts pc;
	double secs = summary ? runloop_total(&c->rl) : runloop_elapsed(&c->rl);
	uint64_t t0 = now_ns();

	stack_set_init(&ss);
	if (collect(c, summary, &ss, &st, &pc) < 0)
		goto out;
	double sym_ms = (now_ns() - t0) / 1e6;
	if (summary && c->out)
		write_output(c, &ss, secs);
	if (c->folded) {
		if (summary)
			folded_write(&ss, stdout);
	} else if (global.json) {
		report_json(c, &ss, &st, summary, secs, sym_ms);
	} else {
		report_text(c, &ss, &st, summary, secs);
	}
	fflush(stdout);
out:
	profile_counts_free(&pc);
	stack_set_free(&ss);
}

static bool poll_check(void *arg)
{
	struct profile_cmd *c = arg;

	prof_engine_poll(c->e, NULL, NULL);
	return c->t.kind == TARGET_NONE || target_alive(&c->t);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_cmd c = { 0 };
	struct target_opts to = { 0 };
	char evd[192];
	int ret;

	u64map_init(&c.prev);
	ret = parse_options(&c, &to, argc, argv);
	if (ret)
		return ret;
	if (c.all && (to.pg_set || to.pids || to.tid)) {
		error("-a and a target together");
		hint("-a profiles every process; --pg, -p or -t only those");
		return EXIT_USAGE;
	}
	if (!c.all && !to.pg_set && !to.pids && !to.tid) {
		error("profile needs a target");
		hint("--pg (the only cluster), --pg DATADIR, -p PID, -t TID, or -a for every process");
		return EXIT_USAGE;
	}
	ret = resolve_event(&c);
	if (ret)
		return ret;
	ret = target_resolve(&c.t, &to, !c.all);
	if (ret)
		return ret;
	if (!c.by_set)
		c.by = c.t.kind == TARGET_PG ? PROF_BY_TYPE : PROF_BY_NONE;
	if (c.by == PROF_BY_TYPE && c.t.kind != TARGET_PG)
		warning("--by type without --pg: processes are grouped by their command name");

	struct profile_opts o = {
		.t = &c.t,
		.ev = c.tracepoint ? NULL : &c.ev,
		.tracepoint = c.tracepoint,
		.user = !c.kernel_only,
		.kernel = !c.user_only,
	};
	ret = prof_engine_open(&c.e, &c.t, &o);
	if (ret)
		goto out;

	runloop_init(&c.rl, c.time.interval, c.time.duration);
	describe_event(&c, evd, sizeof(evd));
	fprintf(stderr, "tracing %s: %s; Ctrl-C to stop\n", target_describe(&c.t), evd);
	for (;;) {
		enum runloop_event ev = runloop_wait(&c.rl, 100, poll_check, &c);
		if (ev == RUNLOOP_TICK) {
			if (!c.folded)
				report(&c, false);
			continue;
		}
		if (c.t.kind != TARGET_NONE && !target_alive(&c.t)) {
			c.exited = true;
			warning("%s exited; stopping", target_describe(&c.t));
		}
		break;
	}
	if (c.time.interval > 0 && !c.folded)
		report(&c, false);
	report(&c, true);
	ret = EXIT_OK;
out:
	prof_engine_free(c.e);
	target_free(&c.t);
	u64map_free(&c.prev);
	return ret;
}
