/* dbtap profile: where the CPU time (or any event) goes, by stack, as text, JSON, folded stacks or a flame graph. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/tracepoint.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "perf/event.h"
#include "perf/sample.h"
#include "profile/engine.h"
#include "report/flame.h"
#include "report/folded.h"
#include "report/stackset.h"
#include "target/label.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/hashtab.h"
#include "util/runloop.h"

#define DEFAULT_HZ  99
#define DEFAULT_TOP 15
/* Below this share of functions setting up a frame pointer, a mapping is said to lack them. */
#define FP_MIN_PERMILLE 250

struct profile_cmd {
	struct frame f;
	struct target t;
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
	bool sort_total;      /* --sort total: functions ranked by total share first */
	struct prof_engine *e;
	struct u64map prev;   /* key hash -> count at the last interval report */
	bool failed;          /* -o could not be written */
	bool events;          /* --events: every sample through the ring buffer */
	bool no_demangle;     /* --no-demangle: C++ names as the binaries have them */
	double sym_cpu_ms;    /* CPU time of reading and naming the stacks (the summary's) */
	struct stack_set evss; /* frame names of the events printed */
};

enum {
	OPT_BY = FRAME_KEY_LONG, OPT_USER, OPT_KERNEL, OPT_TOP, OPT_SORT, OPT_FOLDED, OPT_REVERSE,
	OPT_EVENTS, OPT_NO_DEMANGLE,
};

static const struct frame_opt profile_opts[] = {
	FRAME_OPTS_TARGET,
	{ "all", 'a', no_argument, NULL, "every process on the machine" },
	FRAME_OPTS_TIME,
	{ "freq", 'F', required_argument, "HZ",
	  "samples per second per CPU (default 99; cpu-clock, cycles)" },
	{ "period", 'c', required_argument, "N",
	  "one sample every N events (software events; default 1)" },
	{ "event", 'e', required_argument, "EVENT",
	  "cpu-clock (default), cycles (needs a hardware PMU), page-faults,\n"
	  "context-switches, cpu-migrations...; or a kernel tracepoint:\n"
	  "tp:exceptions:page_fault_user, tp:sched:sched_switch (every hit)" },
	{ "by", OPT_BY, required_argument, "pid|type|thread",
	  "group by process, backend type (--pg) or thread (with its name)" },
	{ "user", OPT_USER, no_argument, NULL, "only the user part of the stacks" },
	{ "kernel", OPT_KERNEL, no_argument, NULL, "only the kernel part of the stacks" },
	{ "top", OPT_TOP, required_argument, "N", "functions listed per group (default 15)" },
	{ "sort", OPT_SORT, required_argument, "self|total",
	  "rank functions by self share (default; perf report --no-children)\n"
	  "or by total share, the samples whose stacks hold them (--children)" },
	{ "folded", OPT_FOLDED, no_argument, NULL,
	  "folded stacks on stdout (FlameGraph's format) instead of the report" },
	{ "output", 'o', required_argument, "FILE",
	  "write FILE.svg (an interactive flame graph) or FILE.folded" },
	{ "reverse", OPT_REVERSE, no_argument, NULL,
	  "the flame graph leaf first (common leaf functions merge)" },
	{ "events", OPT_EVENTS, no_argument, NULL,
	  "also every sample as it comes: time, CPU, thread, stack (-j: an\n"
	  "\"event\" line each), through a ring buffer whose drops are counted" },
	{ "no-demangle", OPT_NO_DEMANGLE, no_argument, NULL,
	  "C++ names as the binaries have them (_ZN...), not demangled" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd profile_frame = {
	.name = "profile",
	.about =
		"Samples the stacks of the target's threads while they run on a CPU (or at each\n"
		"hit of an event) and counts them in the kernel per thread and stack. Reports\n"
		"the functions the time goes to, by self and total share, as text, JSON, folded\n"
		"stacks or an interactive flame graph.\n",
	.examples =
		"  dbtap profile --pg -d 10 -o cpu.svg          a flame graph of the cluster\n"
		"  dbtap profile -p 1234 --by thread -d 5       per thread, with their names\n"
		"  dbtap profile --pg -e tp:exceptions:page_fault_user -d 5 --folded\n",
	.opts = profile_opts,
};

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

static int on_opt(void *ctx, int key, const char *arg)
{
	struct profile_cmd *c = ctx;
	int64_t maxrate;
	long long v;

	switch (key) {
	case 'a':
		c->all = true;
		return 0;
	case 'F':
		maxrate = sample_max_rate();
		if (parse_long(arg, 1, maxrate > 0 ? maxrate - 1 : 99999, &v) < 0) {
			error("bad -F '%s'", arg);
			hint("samples per second per CPU, from 1 to %lld "
			     "(kernel.perf_event_max_sample_rate is %lld); 99 costs little",
			     (long long)(maxrate > 0 ? maxrate - 1 : 99999), (long long)maxrate);
			return -1;
		}
		c->hz = (long)v;
		return 0;
	case 'c':
		if (parse_long(arg, 1, 1000000000000LL, &v) < 0) {
			error("bad -c '%s'", arg);
			hint("one sample every N events: a positive number, e.g. -c 100");
			return -1;
		}
		c->period = v;
		return 0;
	case 'e':
		c->event = arg;
		return 0;
	case OPT_BY:
		c->by_set = true;
		if (!strcmp(arg, "pid"))
			c->by = PROF_BY_PID;
		else if (!strcmp(arg, "type"))
			c->by = PROF_BY_TYPE;
		else if (!strcmp(arg, "thread"))
			c->by = PROF_BY_THREAD;
		else {
			error("bad --by '%s'", arg);
			hint("--by pid (each process), --by type (backend types) or --by "
			     "thread (each thread, with its name)");
			return -1;
		}
		return 0;
	case OPT_USER:
		c->user_only = true;
		return 0;
	case OPT_KERNEL:
		c->kernel_only = true;
		return 0;
	case OPT_TOP:
		return top_opt(&c->top, arg, "functions");
	case OPT_SORT:
		if (strcmp(arg, "self") && strcmp(arg, "total")) {
			error("bad --sort '%s'", arg);
			hint("self (the samples in a function itself) or total (those whose stack holds it)");
			return -1;
		}
		c->sort_total = !strcmp(arg, "total");
		return 0;
	case OPT_FOLDED:
		c->folded = true;
		return 0;
	case 'o':
		c->out = arg;
		return 0;
	case OPT_REVERSE:
		c->reverse = true;
		return 0;
	case OPT_EVENTS:
		c->events = true;
		return 0;
	case OPT_NO_DEMANGLE:
		c->no_demangle = true;
		return 0;
	}
	return -1;
}

static int parse_options(struct profile_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &profile_frame, argc, argv, on_opt, c);

	if (r)
		return r;
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
		/* found out now, not after the whole profile */
		char dir[4096];
		const char *slash = strrchr(c->out, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - c->out) : 1,
			 slash ? c->out : ".");
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
		if (access(dir, W_OK) < 0) {
			error_errno("cannot write '%s'", c->out);
			hint("check that the directory '%s' exists and is writable", dir);
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
			if (ss->kinds[fr[k]] != STACK_MARK) {
				leaf = k;
				break;
			}
		u64map_free(&seen);
		u64map_init(&seen);
		for (uint32_t k = 1; k < e->n; k++) {
			if (ss->kinds[fr[k]] == STACK_MARK)
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

/*
 * "user" and "database" of a "processes" element (docs/json.md): from the one label
 * rule, null for processes that have none or are gone.
 */
static void json_user_database(struct json *j, struct profile_cmd *c, uint32_t pid)
{
	struct pid_label l;

	target_label(&c->t, pid, NULL, 0, &l);
	json_str(j, "user", l.user[0] ? l.user : NULL);
	json_str(j, "database", l.database[0] ? l.database : NULL);
}

/* Samples per process in one report, for the "processes" array. */
struct proc_count {
	uint32_t pid;
	uint64_t samples;
};

struct collected {
	struct stack_set ss;
	struct prof_stats st;
	struct proc_count *procs;
	size_t nprocs;
	int nkeys;            /* (thread, user stack, kernel stack) keys read from the kernel */
};

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_count *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The stacks of this report: everything so far (summary) or since the last interval. */
static int collect(struct profile_cmd *c, bool summary, struct collected *out)
{
	struct profile_counts pc;
	struct u64map pids;
	int ret = 0;

	memset(&out->st, 0, sizeof(out->st));
	uint64_t t0 = now_ns();
	if (prof_engine_read(c->e, &pc) < 0)
		return error("cannot read the profile maps");
	verbose("profile: %d keys read in %.1f ms", pc.n, (now_ns() - t0) / 1e6);
	prof_engine_stats(&pc, &out->st);
	out->nkeys = pc.n;
	u64map_init(&pids);
	for (int i = 0; i < pc.n; i++) {
		uint64_t n = pc.counts[i], h, *pv;
		if (!summary) {
			h = key_hash(&pc.keys[i]);
			pv = u64map_get(&c->prev, h);
			n -= pv ? *pv : 0;
			u64map_put(&c->prev, h, pc.counts[i]);
		}
		if (!n)
			continue;
		if (prof_engine_add(c->e, &pc.keys[i], n, c->by, &out->ss, &out->st) < 0) {
			ret = error("out of memory");
			break;
		}
		pv = u64map_get(&pids, pc.keys[i].pid);
		if (!pv) {
			struct proc_count *np = realloc(out->procs, (out->nprocs + 1) * sizeof(*np));
			if (!np) {
				ret = error("out of memory");
				break;
			}
			out->procs = np;
			out->procs[out->nprocs] = (struct proc_count){ .pid = pc.keys[i].pid };
			u64map_put(&pids, pc.keys[i].pid, out->nprocs++);
			pv = u64map_get(&pids, pc.keys[i].pid);
		}
		out->procs[*pv].samples += n;
	}
	u64map_free(&pids);
	verbose("profile: %d keys named in %.1f ms", pc.n, (now_ns() - t0) / 1e6);
	profile_counts_free(&pc);
	qsort(out->procs, out->nprocs, sizeof(*out->procs), cmp_proc);
	return ret;
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

static void report_text(struct profile_cmd *c, const struct collected *col,
			const struct frame_report *r)
{
	const struct stack_set *ss = &col->ss;
	const struct prof_stats *st = &col->st;
	struct summary s;
	char evd[192];
	int top = c->top ? c->top : DEFAULT_TOP;
	bool summary = r->kind == FRAME_SUMMARY;

	describe_event(c, evd, sizeof(evd));
	if (summarize(ss, &s) < 0) {
		warning("out of memory summarizing the profile");
		return;
	}
	frame_text_head(stdout, r);
	printf("%" PRIu64 " samples of %s\n", st->samples, evd);
	for (size_t gi = 0; gi < s.ng; gi++) {
		const struct group *g = &s.g[gi];
		printf("\n  %s: %" PRIu64 " samples (%.1f%%)\n", stack_set_name(ss, g->name),
		       g->samples, st->samples ? 100.0 * g->samples / st->samples : 0.0);
		/* the --sort ranking first, the other one under it */
		for (int pass = 0; pass < 2; pass++) {
			bool by_total = pass ^ c->sort_total;
			qsort(s.f, s.nf, sizeof(*s.f), by_total ? cmp_total : cmp_self);
			print_table(ss, s.f, s.nf, g->name, g->samples, top, by_total);
		}
	}
	if (!s.ng)
		printf("\n  no samples\n");
	if (summary) {
		const struct sym_module *m;
		int nm = prof_engine_modules(c->e, &m), first = 1;
		for (int i = 0; i < nm; i++) {
			if (m[i].fp_permille < 0 || m[i].fp_permille >= FP_MIN_PERMILLE)
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
	if (summary && r->end && !strcmp(r->end, "target exited"))
		printf("the target exited during the profile\n");
	free(s.f);
	free(s.g);
}

static void json_funcs(struct json *j, const struct stack_set *ss, struct summary *s, uint32_t g,
		       uint64_t gsamples, int top, bool sort_total)
{
	/* the union of the top by self and the top by total, the --sort ranking first */
	struct u64map in;
	int shown = 0;

	u64map_init(&in);
	json_array_begin(j, "functions");
	for (int pass = 0; pass < 2; pass++) {
		qsort(s->f, s->nf, sizeof(*s->f), (pass ^ sort_total) ? cmp_total : cmp_self);
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
			json_str(j, "kind", ss->kinds[f->name] == STACK_KERNEL ? "kernel" :
				 ss->kinds[f->name] == STACK_JIT ? "jit" :
				 ss->kinds[f->name] == STACK_UNNAMED ? "unnamed" : "user");
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

/* "LABEL 1234" (--by pid, --by thread) back into the label and the number. */
static const char *split_id(const char *group, char *label, size_t len, unsigned *id)
{
	const char *sp = strrchr(group, ' ');

	*id = 0;
	if (!sp) {
		snprintf(label, len, "%s", group);
		return label;
	}
	*id = (unsigned)strtoul(sp + 1, NULL, 10);
	snprintf(label, len, "%.*s", (int)(sp - group), group);
	return label;
}

static void report_json(struct profile_cmd *c, const struct collected *col,
			const struct frame_report *r, double sym_ms)
{
	const struct stack_set *ss = &col->ss;
	const struct prof_stats *st = &col->st;
	bool summary = r->kind == FRAME_SUMMARY;
	struct summary s;
	struct json j;
	int top = c->top ? c->top : 20;

	if (summarize(ss, &s) < 0)
		return;
	json_init(&j);
	frame_json_begin(&j, r);
	json_str(&j, "event", c->ev.name);
	if (c->tracepoint)
		;
	else if (c->ev.attr.freq)
		json_int(&j, "frequency_hz", c->ev.attr.sample_freq);
	else if (c->ev.attr.type == PERF_TYPE_SOFTWARE &&
		 (c->ev.attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		  c->ev.attr.config == PERF_COUNT_SW_TASK_CLOCK))
		json_int(&j, "frequency_hz", c->hz ? c->hz : DEFAULT_HZ);
	else
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
	json_uint(&j, "entry_callers_restored", st->entry_fixed);
	json_uint(&j, "stacks", ss->n);
	if (c->events)
		json_uint(&j, "events_dropped", st->ring_full);
	if (summary) {
		json_double(&j, "symbolize_us", sym_ms * 1000);
		json_double(&j, "symbolize_cpu_us", c->sym_cpu_ms * 1000);
		json_uint(&j, "kernel_keys", col->nkeys);
	}
	/* the breakdown is named for what its elements are (docs/json.md) */
	bool per_proc = c->by == PROF_BY_PID || c->by == PROF_BY_THREAD;
	json_array_begin(&j, per_proc ? "processes" : "types");
	for (size_t gi = 0; gi < s.ng; gi++) {
		const char *gname = stack_set_name(ss, s.g[gi].name);
		char label[128];
		unsigned id;
		json_object_begin(&j, NULL);
		if (c->by == PROF_BY_PID) {
			split_id(gname, label, sizeof(label), &id);
			json_uint(&j, "pid", id);
			json_str(&j, "type", label);
			json_user_database(&j, c, id);
		} else if (c->by == PROF_BY_THREAD) {
			split_id(gname, label, sizeof(label), &id);
			uint32_t pid = prof_engine_thread_pid(c->e, id);
			json_uint(&j, "pid", pid);
			if (pid != id)
				json_uint(&j, "tid", id);
			json_str(&j, "thread", label);
			json_str(&j, "type", prof_engine_label(c->e, pid));
			json_user_database(&j, c, pid);
		} else {
			json_str(&j, "type", gname);
		}
		json_uint(&j, "samples", s.g[gi].samples);
		json_funcs(&j, ss, &s, s.g[gi].name, s.g[gi].samples, top, c->sort_total);
		json_object_end(&j);
	}
	json_array_end(&j);
	if (!per_proc) {
		json_array_begin(&j, "processes");
		for (size_t i = 0; i < col->nprocs; i++) {
			json_object_begin(&j, NULL);
			json_uint(&j, "pid", col->procs[i].pid);
			json_str(&j, "type", prof_engine_label(c->e, col->procs[i].pid));
			json_user_database(&j, c, col->procs[i].pid);
			json_uint(&j, "samples", col->procs[i].samples);
			json_object_end(&j);
		}
		json_array_end(&j);
	}
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
			json_bool(&j, "frame_pointers", m[i].fp_permille < 0 ||
				  m[i].fp_permille >= FP_MIN_PERMILLE);
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

static void on_sample(const struct profile_rec *r, void *ctx);

static void report(void *ctx, const struct frame_report *r)
{
	struct profile_cmd *c = ctx;
	struct collected col = { 0 };
	bool summary = r->kind == FRAME_SUMMARY;
	uint64_t t0 = now_ns();
	struct timespec cpu0, cpu1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	if (c->folded && !summary)
		return;
	if (c->events)
		prof_engine_poll(c->e, on_sample, c); /* the last events before the report */
	stack_set_init(&col.ss);
	if (collect(c, summary, &col) < 0)
		goto out;
	double sym_ms = (now_ns() - t0) / 1e6;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
	c->sym_cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
	if (summary && c->out && write_output(c, &col.ss, r->span_s) < 0)
		c->failed = true;
	if (c->folded)
		folded_write(&col.ss, stdout);
	else if (global.json)
		report_json(c, &col, r, sym_ms);
	else
		report_text(c, &col, r);
	fflush(stdout);
out:
	free(col.procs);
	stack_set_free(&col.ss);
}

/* One sample as it came (--events): an NDJSON "event" line, or a text line. */
static void on_sample(const struct profile_rec *r, void *ctx)
{
	struct profile_cmd *c = ctx;
	struct profile_key k = { .pid = r->pid, .tid = r->tid, .ustack = r->ustack, .kstack = r->kstack };
	const uint32_t *f;
	unsigned flags;
	int n;

	/* the names only: a fresh set now and then keeps memory bounded over long runs */
	if (c->evss.n > 4096 || c->evss.names.n > 65536) {
		stack_set_free(&c->evss);
		stack_set_init(&c->evss);
	}
	n = prof_engine_frames(c->e, &k, PROF_BY_NONE, &c->evss, &f, &flags);
	if (n < 0)
		return;
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin_kind(&j, "event", frame_ktime_s(&c->f, r->time_ns));
		json_uint(&j, "cpu", r->cpu);
		json_uint(&j, "pid", r->pid);
		if (r->tid != r->pid)
			json_uint(&j, "tid", r->tid);
		json_str(&j, "type", prof_engine_label(c->e, r->pid));
		json_bool(&j, "truncated", flags & PROF_TRUNCATED);
		json_uint(&j, "kernel_frames", prof_engine_kernel_frames(c->e));
		json_array_begin(&j, "stack");
		for (int i = 1; i < n; i++) /* [0] is the command name, said by "type" */
			json_str(&j, NULL, stack_set_name(&c->evss, f[i]));
		json_array_end(&j);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		printf("%10.6f cpu %-3u %-7u %-7u %s", frame_ktime_s(&c->f, r->time_ns), r->cpu,
		       r->pid, r->tid, n > 0 ? stack_set_name(&c->evss, f[0]) : "");
		/* leaf first, like perf script's one-line form */
		for (int i = n - 1, shown = 0; i >= 1 && shown < 6; i--, shown++)
			printf("%s%s", shown ? " <- " : "  ", stack_set_name(&c->evss, f[i]));
		printf("\n");
	}
}

static bool poll(void *ctx)
{
	struct profile_cmd *c = ctx;

	prof_engine_poll(c->e, c->events ? on_sample : NULL, c);
	return true;
}

/* Detaches and frees; safe to call twice. */
static void cleanup(void *ctx)
{
	struct profile_cmd *c = ctx;

	prof_engine_free(c->e);
	c->e = NULL;
	stack_set_free(&c->evss);
	target_free(&c->t);
	u64map_free(&c->prev);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_cmd c = { 0 };
	const struct frame_ops ops = {
		.report = report,
		.poll = poll,
		.poll_ms = 100,
		.teardown = cleanup,
		.teardown_what = "detaching the profile probes",
	};
	char evd[192];
	int ret;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--timeline"))
			return cmd_profile_timeline(argc, argv);
	u64map_init(&c.prev);
	stack_set_init(&c.evss);
	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	struct target_opts *to = &c.f.to;
	if (c.all && (to->pg_set || to->pids || to->tid)) {
		error("-a and a target together");
		hint("-a profiles every process; --pg, -p or -t only those");
		return EXIT_USAGE;
	}
	if (!c.all && !to->pg_set && !to->pids && !to->tid) {
		error("profile needs a target");
		hint("--pg (the only cluster), --pg DATADIR, -p PID, -t TID, or -a for every process");
		return EXIT_USAGE;
	}
	ret = resolve_event(&c);
	if (ret)
		return ret;
	ret = target_resolve(&c.t, to, !c.all);
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
		.ring = c.events,
	};
	ret = prof_engine_open(&c.e, &c.t, &o);
	if (ret) {
		cleanup(&c);
		return ret;
	}
	prof_engine_demangle(c.e, !c.no_demangle);
	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	c.f.target = &c.t;
	frame_start(&c.f);
	describe_event(&c, evd, sizeof(evd));
	fprintf(stderr, "tracing %s: %s; Ctrl-C to stop\n", target_describe(&c.t), evd);
	prof_engine_preload_kernel(c.e); /* read while it samples: the report names them */
	frame_run(&c.f, &ops, &c);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
