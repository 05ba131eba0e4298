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
#include "cmd/frame.h"
#include "pg/cluster.h"
#include "target/label.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/json.h"
#include "util/runloop.h"


struct count_cmd {
	struct frame f;
	struct target t;
	enum by by;
	int max_probes;
	bool list; /* -l: print what the PROBEs match, attach nothing */
	bool empty; /* --empty-program: attach a program that counts nothing */
	struct probe_list probes;
	struct count_probe *cp;
	uint64_t *prev, *cur;
	uint64_t *prev_un; /* --by: hits no process entry took, at the previous report */
	struct hashmap prev_hits; /* --by: (probe, pid) -> hits at the last report */
};

enum { OPT_BY = FRAME_KEY_LONG, OPT_MAX_PROBES, OPT_FLOOR };

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct frame_opt count_opts[] = {
	FRAME_OPTS_TARGET,
	FRAME_OPTS_TIME,
	{ "by", OPT_BY, required_argument, "pid|type|database|user",
	  "split the counts by process, backend type, database or user" },
	{ "list", 'l', no_argument, NULL,
	  "list the probes each PROBE matches, one per line (bpftrace -l),\n"
	  "and attach nothing: 'dbtap count -l usdt:BINARY:*:*'" },
	{ "max-probes", OPT_MAX_PROBES, required_argument, "N",
	  "allow wildcards to match up to N probes (default " STR(PROBES_MAX_DEFAULT) ")" },
	/* bench/overhead.sh: an empty program at the same sites, the cost floor */
	{ "empty-program", OPT_FLOOR, no_argument, NULL, "", FRAME_OPT_CMD, true },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd count_frame = {
	.name = "count",
	.args = "PROBE...",
	.about =
		"Counts how often functions and USDT probes fire, in the kernel (like funccount).\n\n"
		"probes:\n"
		"  usdt:[BINARY:]PROVIDER:NAME   a USDT probe (all its sites)\n"
		"  uprobe:BINARY:FUNCTION        a function's entry\n"
		"  uretprobe:BINARY:FUNCTION     a function's return\n"
		"  BINARY left out: the target's binary (with no target, the only cluster's);\n"
		"  NAME and FUNCTION take wildcards: 'uprobe:postgres:bms_*', 'usdt:postgresql:*'\n"
		"  No target: every process running the binary.\n",
	.examples =
		"  dbtap count --pg uprobe:postgres:bms_is_member -d 5\n"
		"  dbtap count --pg 'usdt:postgresql:lwlock__*' --by type -i 1\n",
	.opts = count_opts,
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct count_cmd *c = ctx;
	char *end;
	long n;

	switch (key) {
	case 'l':
		c->list = true;
		return 0;
	case OPT_FLOOR:
		c->empty = true;
		return 0;
	case OPT_BY:
		return by_opt(&c->by, arg, BY_PID | BY_TYPE | BY_DATABASE | BY_USER);
	case OPT_MAX_PROBES:
		n = strtol(arg, &end, 10);
		if (!*arg || *end || n < 1 || n > COUNT_MAX_PROBES) {
			error("bad --max-probes '%s'", arg);
			hint("a number from 1 to %d", COUNT_MAX_PROBES);
			return -1;
		}
		c->max_probes = (int)n;
		return 0;
	}
	return -1;
}

static int parse_options(struct count_cmd *c, int argc, char **argv)
{
	int r = frame_parse(&c->f, &count_frame, argc, argv, on_opt, c);

	if (r)
		return r;
	if (optind >= argc) {
		error("count needs at least one PROBE");
		hint("e.g. 'dbtap count --pg uprobe:postgres:bms_is_member'; see 'dbtap count --help'");
		return EXIT_USAGE;
	}
	return 0;
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

/* One split row: a process, or a type, database or user with its processes summed. */
struct split {
	__u32 probe, pid;
	struct pid_label l;
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

static uint64_t prev_key(const struct count_key *k)
{
	return (uint64_t)k->probe << 32 | k->pid;
}

/*
 * The split rows of this report, and into attributed[probe] the cumulative hits the
 * per-process map holds for each probe (what its total is made of, with the hits map).
 */
static int collect_splits(struct count_cmd *c, bool summary, struct split **out,
			  uint64_t *attributed)
{
	struct count_key *k = NULL;
	struct count_val *v = NULL;
	int n = count_probe_read_pids(c->cp, &k, &v), ns = 0;
	struct split *s = calloc(n > 0 ? n : 1, sizeof(*s));

	if (!s) {
		free(k);
		free(v);
		*out = NULL;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t d = v[i].hits, before;
		if (k[i].probe < (__u32)c->probes.n)
			attributed[k[i].probe] += v[i].hits;
		if (!summary && hashmap_get_u64(&c->prev_hits, prev_key(&k[i]), &before))
			d -= before;
		if (!d)
			continue;
		struct pid_label l;
		target_label(&c->t, k[i].pid, v[i].title, sizeof(v[i].title), &l);
		if (c->by != BY_PID) {
			int j;
			for (j = 0; j < ns; j++)
				if (s[j].probe == k[i].probe &&
				    !strcmp(by_label(&s[j].l, c->by), by_label(&l, c->by)))
					break;
			if (j < ns) {
				s[j].hits += d;
				continue;
			}
		}
		s[ns].probe = k[i].probe;
		s[ns].pid = k[i].pid;
		s[ns].l = l;
		s[ns++].hits = d;
	}
	if (!summary) {
		hashmap_free(&c->prev_hits);
		for (int i = 0; i < n; i++)
			if (hashmap_put_u64(&c->prev_hits, prev_key(&k[i]), v[i].hits)) {
				warning("out of memory: the next interval's split covers the run so far");
				hashmap_free(&c->prev_hits);
				break;
			}
	}
	free(k);
	free(v);
	qsort(s, ns, sizeof(*s), cmp_split);
	*out = s;
	return ns;
}

static void json_split(struct json *j, enum by by, const struct split *s)
{
	json_object_begin(j, NULL);
	if (by == BY_PID) {
		json_int(j, "pid", s->pid);
		json_str(j, "type", s->l.type);
		json_str(j, "user", s->l.user[0] ? s->l.user : NULL);
		json_str(j, "database", s->l.database[0] ? s->l.database : NULL);
	} else {
		const char *v = by_label(&s->l, by);
		json_str(j, by_name(by), v[0] ? v : NULL);
	}
	json_uint(j, "hits", s->hits);
	json_object_end(j);
}

static void report(void *ctx, const struct frame_report *r)
{
	struct count_cmd *c = ctx;
	bool summary = r->kind == FRAME_SUMMARY;
	int n = c->probes.n, ns = 0;
	uint64_t *d = calloc(n, sizeof(*d)), *un = calloc(n, sizeof(*un)), total = 0;
	struct split *s = NULL;
	double secs = r->span_s;

	if (!d || !un || count_probe_read(c->cp, c->cur) < 0) {
		warning("cannot read the count map");
		free(d);
		free(un);
		return;
	}
	/* with --by the hits map holds only what no process entry took: un, for now */
	if (c->by != BY_NONE) {
		memcpy(un, c->cur, n * sizeof(*un));
		ns = collect_splits(c, summary, &s, d);
		for (int i = 0; i < n; i++)
			c->cur[i] += d[i];
	}
	for (int i = 0; i < n; i++) {
		uint64_t prev_un = summary ? 0 : c->prev_un[i];
		d[i] = summary ? c->cur[i] : c->cur[i] - c->prev[i];
		total += d[i];
		if (c->by != BY_NONE) {
			uint64_t cum = un[i];
			un[i] = cum - prev_un;
			if (!summary)
				c->prev_un[i] = cum;
		}
	}
	if (!summary)
		memcpy(c->prev, c->cur, n * sizeof(*c->cur));

	if (global.json) {
		struct json j;
		char label[1024];

		json_init(&j);
		frame_json_begin(&j, r);
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
				json_array_begin(&j, by_array(c->by));
				for (int k = 0; k < ns; k++)
					if (s[k].probe == (__u32)i)
						json_split(&j, c->by, &s[k]);
				json_array_end(&j);
				if (un[i])
					json_uint(&j, "unattributed_hits", un[i]);
			}
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		char label[512];
		int w = 5, wk = 4;

		for (int i = 0; i < n; i++) {
			probe_label(&c->probes.p[i], label, sizeof(label), false);
			w = frame_width(w, label);
		}
		for (int k = 0; k < ns; k++)
			wk = frame_width(wk, c->by == BY_PID ? s[k].l.type : by_label(&s[k].l, c->by));
		/* split rows sit under their probe, indented, within the probe column */
		if (c->by == BY_PID && w < 13 + wk)
			w = 13 + wk;
		else if (c->by != BY_NONE && c->by != BY_PID && w < 2 + wk)
			w = 2 + wk;
		frame_text_head(stdout, r);
		printf("\n  %-*s %12s %12s\n", w, "PROBE", "HITS", "PER_SEC");
		for (int i = 0; i < n; i++) {
			/* Intervals list the probes that fired; the summary lists them all. */
			if (!summary && !d[i])
				continue;
			probe_label(&c->probes.p[i], label, sizeof(label), false);
			printf("  %-*s %12" PRIu64 " %12.1f\n", w, label, d[i], secs > 0 ? d[i] / secs : 0.0);
			for (int k = 0; k < ns; k++) {
				const char *v = by_label(&s[k].l, c->by);
				if (s[k].probe != (__u32)i)
					continue;
				if (c->by == BY_PID)
					printf("    pid %-8u %-*s %12" PRIu64 "\n", s[k].pid, w - 13, s[k].l.type,
					       s[k].hits);
				else
					printf("    %-*s %12" PRIu64 "\n", w - 2, v[0] ? v : "-", s[k].hits);
			}
			if (un[i])
				printf("    %-*s %12" PRIu64 "\n", w - 2, "(no process entry left)", un[i]);
		}
	}
	free(s);
	free(d);
	free(un);
}

/* After the summary: detach and free; safe twice (error paths, then the frame). */
static void cleanup(void *ctx)
{
	struct count_cmd *c = ctx;

	count_probe_destroy(c->cp);
	c->cp = NULL;
	probe_list_free(&c->probes);
	target_free(&c->t);
	free(c->prev);
	free(c->prev_un);
	free(c->cur);
	hashmap_free(&c->prev_hits);
	c->prev = c->cur = c->prev_un = NULL;
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
	const struct frame_ops ops = {
		.report = report,
		.teardown = cleanup,
		.teardown_what = "detaching the probes",
	};
	const char *binary;
	int ret;

	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	/* A probe that names no binary means the server's: default to the only cluster. */
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid && needs_default_binary(argc, argv))
		c.f.to.pg_set = true;
	ret = target_resolve(&c.t, &c.f.to, false);
	if (ret)
		return ret;
	if (c.by == BY_TYPE && c.t.kind != TARGET_PG)
		warning("--by type without --pg: processes are grouped by their command name");
	binary = c.t.kind == TARGET_PG ? c.t.pg.binary : c.t.binary;
	for (int i = optind; i < argc; i++) {
		struct probespec s;
		ret = probespec_parse(argv[i], &s);
		if (!ret)
			ret = probespec_resolve(&s, binary, c.list ? 1 << 20 : c.max_probes, &c.probes);
		probespec_free(&s);
		if (ret)
			goto fail;
	}
	if (c.list) {
		for (int i = 0; i < c.probes.n; i++) {
			const struct probe *p = &c.probes.p[i];
			if (p->kind == PROBE_USDT)
				printf("usdt:%s:%s:%s\n", p->binary, p->provider, p->name);
			else
				printf("%s:%s:%s\n", probe_kind_name(p->kind), p->binary, p->name);
		}
		cleanup(&c);
		return EXIT_OK;
	}
	c.cp = count_probe_open(&c.t, &c.probes, c.by != BY_NONE, c.empty);
	if (!c.cp) {
		ret = EXIT_FAIL;
		goto fail;
	}
	c.prev = calloc(c.probes.n, sizeof(*c.prev));
	c.prev_un = calloc(c.probes.n, sizeof(*c.prev_un));
	c.cur = calloc(c.probes.n, sizeof(*c.cur));
	if (!c.prev || !c.cur || !c.prev_un) {
		error("out of memory");
		ret = EXIT_FAIL;
		goto fail;
	}

	/* Signal handlers first: tests and scripts may send SIGINT as soon as this prints. */
	c.f.target = &c.t;
	frame_start(&c.f);
	fprintf(stderr, "tracing %d probe%s (%d site%s) in %s; Ctrl-C to stop\n", c.probes.n,
		c.probes.n == 1 ? "" : "s", count_probe_nsites(c.cp),
		count_probe_nsites(c.cp) == 1 ? "" : "s",
		c.t.kind == TARGET_NONE ? "every process" : target_describe(&c.t));
	return frame_run(&c.f, &ops, &c);
fail:
	cleanup(&c);
	return ret;
}
