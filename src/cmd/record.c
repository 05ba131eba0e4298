/*
 * dbtap record: the flight recorder. Keeps the last --keep seconds of samples and
 * PostgreSQL markers and waits in fixed memory, tests its triggers each second on the figures
 * the kernel aggregated, and when one fires writes the window out as a capture
 * directory: flame graph, folded stacks, timeline (SVG and Firefox Profiler), summary.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/pgmark.h"
#include "cmd/frame.h"
#include "cmd/timeline.h"
#include "perf/event.h"
#include "perf/sample.h"
#include "profile/engine.h"
#include "profile/timeline.h"
#include "profile/trigger.h"
#include "report/flame.h"
#include "report/folded.h"
#include "util/error.h"

#define MAX_TRIGGERS 8
#define SNAPS 128        /* per-second figures kept: the "before" of a summary, at most */
#define DROP_HISTORY 64  /* seconds of commits kept for tps-drop (the previous minute) */

enum { OPT_KEEP = FRAME_KEY_LONG, OPT_MAXMEM, OPT_TRIGGER, OPT_POST, OPT_COOLDOWN, OPT_MAXCAP, OPT_ROTATE,
       OPT_USDT };

static const struct frame_opt rec_opts[] = {
	FRAME_OPTS_TARGET,
	{ "keep", OPT_KEEP, required_argument, "SECS", "seconds of samples and markers kept (default 60)" },
	{ "max-mem", OPT_MAXMEM, required_argument, "SIZE",
	  "memory for what is kept, allocated at the start (default 64M)" },
	{ "trigger", OPT_TRIGGER, required_argument, "EXPR",
	  "when to capture: p99>50ms for 3s, stmt-p99>10ms, tps<500,\n"
	  "tps-drop>50%, cpu>80%; up to 8 (any one fires). SIGUSR2: now" },
	{ "post", OPT_POST, required_argument, "SECS", "seconds after the trigger in a capture (default 10)" },
	{ "cooldown", OPT_COOLDOWN, required_argument, "SECS",
	  "no new capture for SECS after one (default 120)" },
	{ "max-captures", OPT_MAXCAP, required_argument, "N/h", "at most N captures an hour (default 6/h)" },
	{ "freq", 'F', required_argument, "HZ", "samples per second per CPU (default 99)" },
	{ "output", 'o', required_argument, "DIR", "where captures go (made when missing)" },
	{ "usdt", OPT_USDT, no_argument, NULL,
	  "the transactions and statements from the USDT probes (a trap\n"
	  "each) instead of the backends' PgBackendStatus (15 and 16 have it)" },
	FRAME_OPT_DURATION,
	{ "rotate", OPT_ROTATE, required_argument, "SECS",
	  "empty the kernel's stack maps every SECS (default 600; tests)", FRAME_OPT_CMD, true },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd rec_frame = {
	.name = "record",
	.about =
		"Records a cluster (or processes) all the time and keeps only the last --keep\n"
		"seconds, in fixed memory: every on-CPU sample with its stack, and with --pg each\n"
		"backend's transactions, statements and the checkpoints. Each second it tests the\n"
		"triggers on transaction and statement latency, tps and CPU as the kernel counted\n"
		"them; when one holds (for its 'for' time), the window around it is written to a\n"
		"capture directory in DIR: flame graph, folded stacks, timeline (SVG, Firefox\n"
		"Profiler), summary.json and summary.txt. SIGUSR2 captures the last --keep now.\n"
		"The transactions and statements are read from the backend's PgBackendStatus at\n"
		"its switches where dbtap knows the layout (PostgreSQL 15, 16), from the USDT\n"
		"probes otherwise (a trap at each).\n",
	.examples =
		"  dbtap record --pg --trigger 'p99>50ms for 3s' -o /var/lib/dbtap\n"
		"  dbtap record --pg --keep 30s --trigger 'tps-drop>50%' --trigger 'cpu>80% for 5s' -o DIR\n"
		"  kill -USR2 $(pgrep -f 'dbtap record')    capture the last --keep seconds now\n",
	.opts = rec_opts,
};

/* Cumulative figures at the end of one second. */
struct snap {
	uint64_t t_ns;
	uint64_t commits, aborts, samples;
	struct hist txn, stmt;
};

/* What a report of a span of time says: from two snapshots. */
struct figures {
	double secs, tps, cpu_pct;
	double p50_us, p90_us, p99_us, max_us, stmt_p50_us, stmt_p99_us, stmt_max_us;
	uint64_t transactions, statements;
};

struct trig_state {
	struct trigger t;
	uint64_t since_ns; /* when the condition began to hold, 0: it does not */
	bool fired;        /* fired for this run of the condition */
	double last;       /* the latest value */
};

struct capture {
	bool active;
	bool manual;
	int trig;           /* index, -1 for SIGUSR2 */
	uint64_t fire_ns, onset_ns, t0_ns, t1_ns;
	double value;
	char name[128];
	char tmp[4096], path[4096];
};

struct rec_cmd {
	struct frame f;
	struct target t;
	double keep_s, post_s, cooldown_s;
	size_t max_mem;
	int max_per_hour;
	long hz;
	bool usdt;
	const char *dir;
	struct trig_state trig[MAX_TRIGGERS];
	int ntrig;
	struct tl_src src;
	struct timeline tl;
	uint64_t start_ns;
	int ncpus;
	struct snap *snaps;          /* ring of SNAPS, one per second */
	size_t nsnaps, snap_head;
	uint64_t drop[DROP_HISTORY]; /* commits + aborts per second, ring */
	size_t ndrop;
	uint64_t next_eval_ns;
	struct capture cap;
	uint64_t last_capture_ns;
	uint64_t hour[64];           /* fire times of the automatic captures of the last hour */
	int nhour;
	int captures, fired;
	uint64_t ring_lost, stacks_lost;
	struct tl_src_lost lost;
	double rotate_s;
	uint64_t next_rotate_ns, rotated_lost, last_rotate_ns;
	int rotations;
};

static volatile sig_atomic_t usr2;

static void on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

static int seconds_opt(const char *opt, const char *arg, double min, double max, double *out)
{
	char buf[64];
	size_t l = strlen(arg);
	double v;

	/* "60s" or "60" */
	if (l == 0 || l >= sizeof(buf))
		goto bad;
	memcpy(buf, arg, l + 1);
	if (buf[l - 1] == 's')
		buf[l - 1] = '\0';
	v = parse_seconds(buf);
	if (!(v >= min && v <= max))
		goto bad;
	*out = v;
	return 0;
bad:
	error("bad %s '%s'", opt, arg);
	hint("seconds, from %g to %g: %s 60s", min, max, opt);
	return -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct rec_cmd *c = ctx;
	char *end;

	switch (key) {
	case OPT_KEEP:
		return seconds_opt("--keep", arg, 1, 3600, &c->keep_s);
	case OPT_POST:
		return seconds_opt("--post", arg, 0, 600, &c->post_s);
	case OPT_ROTATE:
		return seconds_opt("--rotate", arg, 1, 86400, &c->rotate_s);
	case OPT_USDT:
		c->usdt = true;
		return 0;
	case OPT_COOLDOWN:
		return seconds_opt("--cooldown", arg, 0, 86400, &c->cooldown_s);
	case OPT_MAXMEM: {
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 10), mul = 1;
		if (*end == 'K' || *end == 'k')
			mul = 1 << 10, end++;
		else if (*end == 'M' || *end == 'm')
			mul = 1 << 20, end++;
		else if (*end == 'G' || *end == 'g')
			mul = 1 << 30, end++;
		if (!isdigit((unsigned char)arg[0]) || *end || errno || v == 0 || v > (64ull << 30) / mul ||
		    v * mul < (8u << 20)) {
			error("bad --max-mem '%s'", arg);
			hint("a size from 8M to 64G: --max-mem 64M");
			return -1;
		}
		c->max_mem = v * mul;
		return 0;
	}
	case OPT_TRIGGER:
		if (c->ntrig == MAX_TRIGGERS) {
			error("more than %d triggers", MAX_TRIGGERS);
			hint("any one of them fires a capture: keep the ones that matter");
			return -1;
		}
		return trigger_parse(arg, &c->trig[c->ntrig++].t);
	case OPT_MAXCAP: {
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (!isdigit((unsigned char)arg[0]) || errno || v < 1 || v > 60 ||
		    (*end && strcmp(end, "/h"))) {
			error("bad --max-captures '%s'", arg);
			hint("captures an hour, from 1 to 60: --max-captures 6/h");
			return -1;
		}
		c->max_per_hour = (int)v;
		return 0;
	}
	case 'F':
		return tl_hz_opt(&c->hz, arg);
	case 'o':
		c->dir = arg;
		return 0;
	}
	return -1;
}

static struct snap *snap_at(struct rec_cmd *c, size_t back)
{
	/* back 0: the newest */
	if (back >= c->nsnaps)
		return NULL;
	return &c->snaps[(c->snap_head + SNAPS - 1 - back) % SNAPS];
}

/* The snapshot nearest to t_ns at or before it (the oldest one when all are later). */
static struct snap *snap_before(struct rec_cmd *c, uint64_t t_ns)
{
	struct snap *best = NULL;

	for (size_t i = 0; i < c->nsnaps; i++) {
		struct snap *s = snap_at(c, i);
		best = s;
		if (s->t_ns <= t_ns)
			break;
	}
	return best;
}

static double pct_us(const struct hist *h, double p)
{
	return h->count ? hist_percentile(h, p) / 1e3 : NAN;
}

static void figures_of(struct rec_cmd *c, const struct snap *a, const struct snap *b, struct figures *fg)
{
	struct hist *d = malloc(sizeof(*d));

	memset(fg, 0, sizeof(*fg));
	fg->p50_us = fg->p90_us = fg->p99_us = fg->max_us = NAN;
	fg->stmt_p50_us = fg->stmt_p99_us = fg->stmt_max_us = NAN;
	fg->tps = fg->cpu_pct = NAN;
	if (!a || !b || b->t_ns <= a->t_ns || !d) {
		free(d);
		return;
	}
	fg->secs = (b->t_ns - a->t_ns) / 1e9;
	fg->transactions = (b->commits + b->aborts) - (a->commits + a->aborts);
	fg->tps = fg->transactions / fg->secs;
	fg->cpu_pct = 100.0 * (b->samples - a->samples) / ((double)c->hz * c->ncpus * fg->secs);
	hist_delta(d, &b->txn, &a->txn);
	fg->p50_us = pct_us(d, 50);
	fg->p90_us = pct_us(d, 90);
	fg->p99_us = pct_us(d, 99);
	fg->max_us = d->count ? hist_max(d) / 1e3 : NAN;
	hist_delta(d, &b->stmt, &a->stmt);
	fg->statements = d->count;
	fg->stmt_p50_us = pct_us(d, 50);
	fg->stmt_p99_us = pct_us(d, 99);
	fg->stmt_max_us = d->count ? hist_max(d) / 1e3 : NAN;
	free(d);
}

static double metric_of(struct rec_cmd *c, enum trig_metric m, const struct figures *fg, const struct hist *tx,
			const struct hist *st)
{
	switch (m) {
	case TRIG_TXN_P50: return pct_us(tx, 50);
	case TRIG_TXN_P90: return pct_us(tx, 90);
	case TRIG_TXN_P99: return pct_us(tx, 99);
	case TRIG_TXN_MAX: return tx->count ? hist_max(tx) / 1e3 : NAN;
	case TRIG_STMT_P50: return pct_us(st, 50);
	case TRIG_STMT_P90: return pct_us(st, 90);
	case TRIG_STMT_P99: return pct_us(st, 99);
	case TRIG_STMT_MAX: return st->count ? hist_max(st) / 1e3 : NAN;
	case TRIG_TPS: return fg->tps;
	case TRIG_CPU: return fg->cpu_pct;
	case TRIG_TPS_DROP: {
		/* the minute before this second: at least 10 seconds of it */
		size_t n = c->ndrop < DROP_HISTORY ? c->ndrop : DROP_HISTORY;
		if (n < 11)
			return NAN;
		double sum = 0;
		size_t k = n - 1 > 60 ? 60 : n - 1;
		for (size_t i = 1; i <= k; i++)
			sum += c->drop[(c->ndrop - 1 - i) % DROP_HISTORY];
		double mean = sum / k;
		return mean > 0 ? 100.0 * (1 - fg->tps / mean) : NAN;
	}
	default:
		return NAN;
	}
}

static void json_figures(struct json *j, const char *key, const struct figures *fg)
{
	json_object_begin(j, key);
	json_double(j, "seconds", fg->secs);
	json_uint(j, "transactions", fg->transactions);
	json_double(j, "tps", fg->tps);
	json_double(j, "txn_p50_us", fg->p50_us);
	json_double(j, "txn_p90_us", fg->p90_us);
	json_double(j, "txn_p99_us", fg->p99_us);
	json_double(j, "txn_max_us", fg->max_us);
	json_uint(j, "statements", fg->statements);
	json_double(j, "stmt_p50_us", fg->stmt_p50_us);
	json_double(j, "stmt_p99_us", fg->stmt_p99_us);
	json_double(j, "stmt_max_us", fg->stmt_max_us);
	json_double(j, "cpu_pct", fg->cpu_pct);
	json_object_end(j);
}

static double rel_s(const struct rec_cmd *c, uint64_t ns)
{
	return ns >= c->start_ns ? (ns - c->start_ns) / 1e9 : -((c->start_ns - ns) / 1e9);
}

/* Removes a directory this command wrote (files only, one level). */
static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char p[4096 + 256];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(path);
}

/* Captures a killed recorder left half written: named .NAME.partial, never NAME. */
static void remove_partials(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4096 + 256];

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] != '.' || l < 9 || strcmp(de->d_name + l - 8, ".partial"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		warning("removing '%s', a capture a previous run did not finish", p);
		remove_dir(p);
	}
	closedir(d);
}

static void json_line_begin(struct rec_cmd *c, struct json *j, const char *kind)
{
	json_init(j);
	frame_json_begin_kind(j, kind, frame_time_s(&c->f));
}

static void capture_begin(struct rec_cmd *c, int ti, uint64_t now, uint64_t onset, double value)
{
	struct capture *cap = &c->cap;
	struct timespec rt;
	struct tm tm;
	char stamp[32];

	memset(cap, 0, sizeof(*cap));
	cap->active = true;
	cap->manual = ti < 0;
	cap->trig = ti;
	cap->fire_ns = now;
	cap->onset_ns = onset;
	cap->value = value;
	cap->t0_ns = now > (uint64_t)(c->keep_s * 1e9) ? now - (uint64_t)(c->keep_s * 1e9) : 0;
	if (cap->t0_ns < c->start_ns)
		cap->t0_ns = c->start_ns;
	cap->t1_ns = now + (cap->manual ? 0 : (uint64_t)(c->post_s * 1e9));
	clock_gettime(CLOCK_REALTIME, &rt);
	localtime_r(&rt.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int n = 1; n < 100; n++) {
		struct stat st;
		snprintf(cap->name, sizeof(cap->name), "%s-%s%s%.0d", stamp,
			 ti < 0 ? "signal" : trigger_metric_name(c->trig[ti].t.metric), n > 1 ? "-" : "",
			 n > 1 ? n : 0);
		snprintf(cap->path, sizeof(cap->path), "%s/%s", c->dir, cap->name);
		if (stat(cap->path, &st) < 0)
			break;
	}
	snprintf(cap->tmp, sizeof(cap->tmp), "%s/.%s.partial", c->dir, cap->name);
	/* made now: a recorder killed before the capture is whole leaves it named partial */
	if (mkdir(cap->tmp, 0755) < 0 && errno != EEXIST) {
		error_errno("cannot make '%s'", cap->tmp);
		hint("check that '%s' is writable and has free space", c->dir);
		cap->active = false;
	}
}

/* The window's stacks with the backend type (or thread name) as their root: the flame graph. */
static int flame_set(const struct tl_model *m, struct stack_set *fs)
{
	uint32_t *fr = NULL;
	size_t cap = 0;

	stack_set_init(fs);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct tl_row *r = &m->rows[i];
		uint32_t root = stack_set_frame(fs, r->type[0] ? r->type : r->label, STACK_GROUP);
		for (size_t k = 0; k < r->nticks; k++) {
			const struct stack_ent *e = &m->ss.v[r->ticks[k].stack];
			if (e->n > cap) {
				cap = e->n;
				uint32_t *nf = realloc(fr, cap * sizeof(*fr));
				if (!nf)
					goto fail;
				fr = nf;
			}
			fr[0] = root;
			for (uint32_t x = 1; x < e->n; x++) {
				uint32_t id = m->ss.frames[e->off + x];
				fr[x] = stack_set_frame(fs, stack_set_name(&m->ss, id), m->ss.kinds[id]);
			}
			if (stack_set_add(fs, fr, e->n, 1) < 0)
				goto fail;
		}
	}
	free(fr);
	return 0;
fail:
	free(fr);
	return -1;
}

struct leaf { uint32_t name; uint64_t self, total; };

static int cmp_leaf(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;
	return x->self != y->self ? (x->self > y->self ? -1 : 1) : (x->total > y->total ? -1 : x->total < y->total);
}

/* Functions by self (the leaf) and total (anywhere in the stack, once) share. */
static size_t top_functions(const struct stack_set *ss, struct leaf **out)
{
	struct u64map idx, seen;
	struct leaf *v = NULL;
	size_t n = 0;

	u64map_init(&idx);
	for (size_t i = 0; i < ss->n; i++) {
		const struct stack_ent *e = &ss->v[i];
		const uint32_t *fr = ss->frames + e->off;
		int leaf = -1;
		for (int k = (int)e->n - 1; k >= 1; k--)
			if (ss->kinds[fr[k]] != STACK_MARK) {
				leaf = k;
				break;
			}
		u64map_init(&seen);
		for (uint32_t k = 1; k < e->n; k++) {
			if (ss->kinds[fr[k]] == STACK_MARK)
				continue;
			uint64_t *x = u64map_get(&idx, fr[k]);
			if (!x) {
				struct leaf *nv = realloc(v, (n + 1) * sizeof(*v));
				if (!nv)
					break;
				v = nv;
				v[n] = (struct leaf){ .name = fr[k] };
				u64map_put(&idx, fr[k], n++);
				x = u64map_get(&idx, fr[k]);
			}
			if (!u64map_get(&seen, fr[k])) {
				u64map_put(&seen, fr[k], 1);
				v[*x].total += e->count;
			}
			if ((int)k == leaf)
				v[*x].self += e->count;
		}
		u64map_free(&seen);
	}
	u64map_free(&idx);
	if (n)
		qsort(v, n, sizeof(*v), cmp_leaf);
	*out = v;
	return n;
}

static int write_summary(struct rec_cmd *c, const struct capture *cap, const struct tl_model *m,
			 const struct stack_set *fs)
{
	char p[4200];
	struct figures before, during;
	struct snap *s_on = snap_before(c, cap->onset_ns), *s_b0, *s_end;
	uint64_t b0 = cap->onset_ns > (uint64_t)(c->keep_s * 1e9) ? cap->onset_ns - (uint64_t)(c->keep_s * 1e9) : 0;
	struct leaf *top = NULL;
	size_t ntop = top_functions(fs, &top);
	struct json j;
	FILE *f;
	int rc = 0;

	s_b0 = snap_before(c, b0);
	s_end = snap_at(c, 0);
	figures_of(c, s_b0, s_on, &before);
	figures_of(c, s_on, s_end, &during);
	const char *what = cap->manual ? "SIGUSR2" : c->trig[cap->trig].t.text;

	json_init(&j);
	json_object_begin(&j, NULL);
	json_str(&j, "capture", cap->name);
	json_str(&j, "trigger", what);
	if (!cap->manual) {
		char canon[128];
		trigger_format(&c->trig[cap->trig].t, canon, sizeof(canon));
		json_str(&j, "trigger_canonical", canon);
		json_double(&j, "value", cap->value);
	}
	json_str(&j, "target", target_describe(&c->t));
	if (tl_src_marks_from(&c->src))
		json_str(&j, "markers_from", tl_src_marks_from(&c->src));
	json_double(&j, "start_realtime_s", c->src.start_realtime_s);
	json_double(&j, "start_monotonic_s", c->start_ns / 1e9);
	json_double(&j, "fired_s", rel_s(c, cap->fire_ns));
	json_double(&j, "onset_s", rel_s(c, cap->onset_ns));
	json_object_begin(&j, "window");
	json_double(&j, "start_s", m->t0_s);
	json_double(&j, "end_s", m->t1_s);
	json_object_end(&j);
	json_figures(&j, "before", &before);
	json_figures(&j, "during", &during);
	json_int(&j, "frequency_hz", c->hz);
	json_uint(&j, "samples", m->samples);
	json_uint(&j, "samples_lost", m->lost);
	json_uint(&j, "markers_lost", m->marks_lost);
	json_array_begin(&j, "top_functions");
	for (size_t i = 0; i < ntop && i < 20; i++) {
		json_object_begin(&j, NULL);
		json_str(&j, "name", stack_set_name(fs, top[i].name));
		json_double(&j, "self_pct", fs->total ? 100.0 * top[i].self / fs->total : 0);
		json_double(&j, "total_pct", fs->total ? 100.0 * top[i].total / fs->total : 0);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_array_begin(&j, "files");
	static const char *const files[] = { "flame.svg", "profile.folded", "timeline.svg",
					     "timeline.json.gz", "summary.txt" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		json_str(&j, NULL, files[i]);
	json_array_end(&j);
	json_object_end(&j);
	snprintf(p, sizeof(p), "%s/summary.json", cap->tmp);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%s\n", j.sb.buf) < 0)
		rc = -1;
	if (f && fclose(f))
		rc = -1;
	json_release(&j);

	snprintf(p, sizeof(p), "%s/summary.txt", cap->tmp);
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "capture %s: %s\n", cap->name, what);
		if (!cap->manual)
			fprintf(f, "fired at %.1f s (value %.1f), the condition began at %.1f s\n",
				rel_s(c, cap->fire_ns), cap->value, rel_s(c, cap->onset_ns));
		fprintf(f, "window %.1f s to %.1f s, %" PRIu64 " samples\n\n", m->t0_s, m->t1_s, m->samples);
		fprintf(f, "%-8s %8s %10s %10s %10s %10s %6s\n", "", "tps", "txn p50", "txn p99", "txn max",
			"stmt p99", "cpu");
		const struct figures *fgs[2] = { &before, &during };
		for (int i = 0; i < 2; i++) {
			char v[5][16];
			const double us[5] = { fgs[i]->p50_us, fgs[i]->p99_us, fgs[i]->max_us,
					       fgs[i]->stmt_p99_us, fgs[i]->cpu_pct };
			for (int k = 0; k < 5; k++)
				snprintf(v[k], sizeof(v[k]), isnan(us[k]) ? "-" : k < 4 ? "%.2fms" : "%.1f%%",
					 k < 4 ? us[k] / 1e3 : us[k]);
			fprintf(f, "%-8s %8.1f %10s %10s %10s %10s %6s\n", i ? "during" : "before",
				isnan(fgs[i]->tps) ? 0.0 : fgs[i]->tps, v[0], v[1], v[2], v[3], v[4]);
		}
		fprintf(f, "\n  self%%  total%%  function\n");
		for (size_t i = 0; i < ntop && i < 15; i++)
			fprintf(f, "%6.1f %7.1f  %.80s\n", fs->total ? 100.0 * top[i].self / fs->total : 0,
				fs->total ? 100.0 * top[i].total / fs->total : 0, stack_set_name(fs, top[i].name));
		if (fclose(f))
			rc = -1;
	} else {
		rc = -1;
	}
	free(top);
	return rc;
}

static int write_stacks(const struct capture *cap, const struct stack_set *fs, const char *sub)
{
	char p[4200], tmp[4300];
	FILE *f;
	int r;

	snprintf(p, sizeof(p), "%s/flame.svg", cap->tmp);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	struct flame_opts o = { .title = "CPU profile", .subtitle = sub, .unit = "samples" };
	r = flame_write_svg(fs, f, &o);
	if (fclose(f) || r < 0 || rename(tmp, p))
		return -1;
	snprintf(p, sizeof(p), "%s/profile.folded", cap->tmp);
	f = fopen(p, "w");
	if (!f)
		return -1;
	r = folded_write(fs, f);
	return fclose(f) || r < 0 ? -1 : 0;
}

static void capture_write(struct rec_cmd *c, uint64_t now)
{
	struct capture *cap = &c->cap;
	struct tl_model m;
	struct stack_set fs;
	struct prof_stats st = { 0 };
	char sub[512], p[4200];
	int rc = -1;

	if (now < cap->t1_ns)
		cap->t1_ns = now; /* SIGTERM: what there is */
	snprintf(sub, sizeof(sub), "%s, %s, %.1f s", target_describe(&c->t),
		 cap->manual ? "SIGUSR2" : c->trig[cap->trig].t.text, (cap->t1_ns - cap->t0_ns) / 1e9);
	struct tl_build b = {
		.t0_ns = cap->t0_ns, .t1_ns = cap->t1_ns, .start_ns = c->start_ns, .hz = c->hz,
		.by = c->t.kind == TARGET_PG ? PROF_BY_PID : PROF_BY_THREAD,
		.title = "dbtap record", .subtitle = sub,
		/* the memory a capture takes to write stays bounded on the busiest server */
		.max_stmts = 100000,
	};
	stack_set_init(&fs);
	tl_src_open_waits(&c->src, &c->tl, b.t1_ns);
	if (timeline_build(&c->tl, c->src.e, &b, &m, &st) < 0 || flame_set(&m, &fs) < 0) {
		error("out of memory writing capture '%s'", cap->name);
		goto out;
	}
	snprintf(p, sizeof(p), "%s/timeline.svg", cap->tmp);
	if (tl_write_file(&m, p, 0, c->src.start_realtime_s) < 0)
		goto out;
	snprintf(p, sizeof(p), "%s/timeline.json.gz", cap->tmp);
	if (tl_write_file(&m, p, 0, c->src.start_realtime_s) < 0)
		goto out;
	if (write_stacks(cap, &fs, sub) < 0 || write_summary(c, cap, &m, &fs) < 0) {
		error_errno("cannot write capture '%s'", cap->name);
		hint("check the free space of '%s'", c->dir);
		goto out;
	}
	/* whole: now it gets its name */
	if (rename(cap->tmp, cap->path) < 0) {
		error_errno("cannot rename '%s' to '%s'", cap->tmp, cap->path);
		goto out;
	}
	rc = 0;
	c->captures++;
	if (global.json) {
		struct json j;
		json_line_begin(c, &j, "capture");
		json_str(&j, "capture", cap->name);
		json_str(&j, "path", cap->path);
		json_str(&j, "trigger", cap->manual ? "SIGUSR2" : c->trig[cap->trig].t.text);
		json_double(&j, "window_start_s", m.t0_s);
		json_double(&j, "window_end_s", m.t1_s);
		json_uint(&j, "samples", m.samples);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		printf("%9.3f capture %s: %.1f s to %.1f s, %" PRIu64 " samples\n", frame_time_s(&c->f),
		       cap->path, m.t0_s, m.t1_s, m.samples);
		fflush(stdout);
	}
out:
	if (rc < 0)
		remove_dir(cap->tmp);
	tl_model_free(&m);
	stack_set_free(&fs);
	cap->active = false;
}

static void say_trigger(struct rec_cmd *c, int ti, double value, uint64_t onset, const char *why)
{
	if (global.json) {
		struct json j;
		json_line_begin(c, &j, "trigger");
		json_str(&j, "trigger", c->trig[ti].t.text);
		json_str(&j, "metric", trigger_metric_name(c->trig[ti].t.metric));
		json_double(&j, "value", value);
		json_double(&j, "onset_s", rel_s(c, onset));
		json_bool(&j, "captured", why == NULL);
		json_str(&j, "why_not", why);
		if (!why)
			json_str(&j, "capture", c->cap.name);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		printf("%9.3f trigger %s: %.1f since %.1f s; %s%s\n", frame_time_s(&c->f), c->trig[ti].t.text,
		       value, rel_s(c, onset), why ? "no capture: " : "capturing ", why ? why : c->cap.name);
		fflush(stdout);
	}
}

/* Each second: a snapshot of the kernel's figures, the triggers tested on the second. */
static void evaluate(struct rec_cmd *c, uint64_t now)
{
	struct pgmark_totals *pt = NULL;
	__u64 pstats[PROFILE_ST_MAX];
	struct snap *s = &c->snaps[c->snap_head];
	struct snap *prev = snap_at(c, 0);

	s->t_ns = now;
	s->commits = s->aborts = s->samples = 0;
	hist_reset(&s->txn);
	hist_reset(&s->stmt);
	if (c->src.pm) {
		pt = malloc(sizeof(*pt));
		if (pt && pgmark_probe_read(c->src.pm, pt) == 0) {
			s->commits = pt->stats[PGMARK_ST_COMMITS];
			s->aborts = pt->stats[PGMARK_ST_ABORTS];
			s->txn = pt->txn;
			s->stmt = pt->stmt;
		}
		free(pt);
	}
	if (prof_engine_read_stats(c->src.e, pstats) == 0) {
		s->samples = pstats[PROFILE_ST_SAMPLES];
		c->ring_lost = pstats[PROFILE_ST_RING_FULL];
		c->stacks_lost = pstats[PROFILE_ST_STACKS_FULL];
	}
	c->snap_head = (c->snap_head + 1) % SNAPS;
	if (c->nsnaps < SNAPS)
		c->nsnaps++;
	if (!prev)
		return;

	struct figures fg;
	struct hist *tx = malloc(sizeof(*tx)), *st = malloc(sizeof(*st));
	if (!tx || !st)
		goto out;
	figures_of(c, prev, s, &fg);
	c->drop[c->ndrop++ % DROP_HISTORY] = (s->commits + s->aborts) - (prev->commits + prev->aborts);
	hist_delta(tx, &s->txn, &prev->txn);
	hist_delta(st, &s->stmt, &prev->stmt);
	for (int i = 0; i < c->ntrig; i++) {
		struct trig_state *ts = &c->trig[i];
		double v = metric_of(c, ts->t.metric, &fg, tx, st);
		ts->last = v;
		verbose("%.0f s: %s is %g", rel_s(c, now), ts->t.text, v);
		if (!trigger_holds(&ts->t, v)) {
			ts->since_ns = 0;
			ts->fired = false;
			continue;
		}
		if (!ts->since_ns)
			ts->since_ns = prev->t_ns; /* the second it was measured over */
		if (ts->fired || (now - ts->since_ns) / 1e9 + 1e-3 < ts->t.for_s)
			continue;
		ts->fired = true;
		c->fired++;
		/* the hour's captures: those older than an hour drop out */
		int k = 0;
		for (int h = 0; h < c->nhour; h++)
			if (now - c->hour[h] < 3600ull * 1000000000ull)
				c->hour[k++] = c->hour[h];
		c->nhour = k;
		const char *why = NULL;
		if (c->cap.active)
			why = "a capture is in progress";
		else if (c->last_capture_ns && (now - c->last_capture_ns) / 1e9 < c->cooldown_s)
			why = "cooldown";
		else if (c->nhour >= c->max_per_hour)
			why = "max-captures";
		if (!why) {
			capture_begin(c, i, now, ts->since_ns, v);
			if (!c->cap.active)
				why = "cannot write";
			else {
				c->last_capture_ns = now;
				if (c->nhour < 64)
					c->hour[c->nhour++] = now;
			}
		}
		say_trigger(c, i, v, ts->since_ns, why);
	}
out:
	free(tx);
	free(st);
}

static bool poll(void *ctx)
{
	struct rec_cmd *c = ctx;
	uint64_t now;

	tl_src_poll(&c->src, &c->tl);
	now = now_ns();
	if (usr2) {
		usr2 = 0;
		if (c->cap.active) {
			warning("SIGUSR2: a capture is in progress; this one is not taken");
		} else {
			capture_begin(c, -1, now, now, NAN);
			if (global.json && c->cap.active) {
				struct json j;
				json_line_begin(c, &j, "trigger");
				json_str(&j, "trigger", "SIGUSR2");
				json_bool(&j, "captured", true);
				json_str(&j, "capture", c->cap.name);
				json_object_end(&j);
				json_flush_line(&j, stdout);
				json_release(&j);
			}
		}
	}
	if (now >= c->next_eval_ns) {
		evaluate(c, now);
		c->next_eval_ns += 1000000000ull;
		if (c->next_eval_ns < now)
			c->next_eval_ns = now + 1000000000ull;
	}
	if (c->cap.active && now >= c->cap.t1_ns)
		capture_write(c, now);
	/*
	 * Days of running: the kernel keeps every distinct stack once and would fill up.
	 * Every --rotate seconds (sooner once stacks are lost), between captures, the
	 * stacks the kept samples need are copied here and the kernel's maps emptied.
	 */
	if (!c->cap.active && (now >= c->next_rotate_ns ||
			       (c->stacks_lost > c->rotated_lost && now >= c->last_rotate_ns + 10000000000ull))) {
		uint64_t *u, *k;
		size_t n;
		if (timeline_stack_hashes(&c->tl, &u, &k, &n) == 0) {
			int gone = prof_engine_rotate(c->src.e, u, n, k, n);
			verbose("stacks rotated: %d let go in the kernel, %zu samples kept", gone, n);
			free(u);
			free(k);
			c->rotations++;
		}
		c->rotated_lost = c->stacks_lost;
		c->last_rotate_ns = now;
		c->next_rotate_ns = now + (uint64_t)(c->rotate_s * 1e9);
	}
	/* what no capture can want any more goes; a pending capture keeps its window */
	uint64_t keep = (uint64_t)(c->keep_s * 1e9), horizon = now > keep ? now - keep : 0;
	if (c->cap.active && c->cap.t0_ns < horizon)
		horizon = c->cap.t0_ns;
	timeline_expire(&c->tl, horizon);
	return true;
}

static void report(void *ctx, const struct frame_report *fr)
{
	struct rec_cmd *c = ctx;

	poll(c);
	tl_src_lost(&c->src, &c->lost);
	/* SIGTERM, Ctrl-C or -d during a capture: it is finished with what there is */
	if (c->cap.active)
		capture_write(c, now_ns());
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin(&j, fr);
		json_int(&j, "triggers_fired", c->fired);
		json_int(&j, "captures", c->captures);
		if (tl_src_marks_from(&c->src))
			json_str(&j, "markers_from", tl_src_marks_from(&c->src));
		json_uint(&j, "samples", c->tl.samples_seen);
		json_uint(&j, "markers", c->tl.marks_seen);
		json_uint(&j, "waits", c->tl.waits_seen);
		json_object_begin(&j, "lost");
		json_uint(&j, "ring_full", c->ring_lost);
		json_uint(&j, "stack_map_full", c->stacks_lost);
		json_uint(&j, "marks_ring_full", c->lost.marks_ring_full);
		json_uint(&j, "marks_threads_full", c->lost.marks_threads_full);
		json_uint(&j, "waits_ring_full", c->lost.waits_ring_full);
		json_uint(&j, "waits_threads_full", c->lost.waits_threads_full);
		json_uint(&j, "statement_texts", c->tl.texts_lost);
		json_object_end(&j);
		json_uint(&j, "kept_bytes", c->tl.bytes);
		json_int(&j, "stack_rotations", c->rotations);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		printf("\nrecorded %.1f s: %d trigger%s fired, %d capture%s in %s\n", fr->span_s, c->fired,
		       c->fired == 1 ? "" : "s", c->captures, c->captures == 1 ? "" : "s", c->dir);
		printf("%" PRIu64 " samples, %" PRIu64 " markers, %" PRIu64 " waits; lost %" PRIu64
		       " samples (ring full), %" PRIu64 " (stack map full), %" PRIu64 " markers and %" PRIu64
		       " waits (ring full)\n", c->tl.samples_seen, c->tl.marks_seen, c->tl.waits_seen,
		       c->ring_lost, c->stacks_lost, c->lost.marks_ring_full,
		       c->lost.waits_ring_full + c->lost.waits_threads_full);
	}
	fflush(stdout);
}

static void teardown(void *ctx)
{
	struct rec_cmd *c = ctx;

	tl_src_free(&c->src);
	timeline_free(&c->tl);
	free(c->snaps);
	target_free(&c->t);
}

int cmd_record(int argc, char **argv)
{
	struct rec_cmd c = { .keep_s = 60, .post_s = 10, .cooldown_s = 120, .max_mem = 64u << 20,
			     .max_per_hour = 6, .hz = 99, .rotate_s = 600 };
	const struct frame_ops ops = {
		.report = report,
		.poll = poll,
		.poll_ms = 100,
		.teardown = teardown,
		.teardown_what = "detaching the recorder's probes",
	};
	struct sigaction sa = { .sa_handler = on_usr2 };
	struct stat st;
	int ret;

	ret = frame_parse(&c.f, &rec_frame, argc, argv, on_opt, &c);
	if (ret)
		return frame_status(ret);
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("record takes options only; see 'dbtap record --help'");
		return EXIT_USAGE;
	}
	if (!c.dir) {
		error("record needs -o DIR");
		hint("captures are directories inside DIR: dbtap record --pg --trigger 'p99>50ms' -o /var/lib/dbtap");
		return EXIT_USAGE;
	}
	if (!c.ntrig)
		warning("no --trigger: only SIGUSR2 captures");
	if (!c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid)
		c.f.to.pg_set = true; /* the only cluster running here */
	for (int i = 0; i < c.ntrig; i++)
		if (c.trig[i].t.metric != TRIG_CPU && !c.f.to.pg_set) {
			error("trigger '%s' needs --pg", c.trig[i].t.text);
			hint("latencies and tps come from PostgreSQL's probes; cpu works on any target");
			return EXIT_USAGE;
		}
	if (mkdir(c.dir, 0755) < 0 && errno != EEXIST) {
		error_errno("cannot make '%s'", c.dir);
		hint("give a directory that can be made or written");
		return EXIT_FAIL;
	}
	if (stat(c.dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(c.dir, W_OK) < 0) {
		error("'%s' is not a writable directory", c.dir);
		hint("-o names a directory for the captures");
		return EXIT_USAGE;
	}
	remove_partials(c.dir);
	c.ncpus = libbpf_num_possible_cpus();
	ret = target_resolve(&c.t, &c.f.to, true);
	if (ret)
		return ret;
	/*
	 * Memory: the per-second figures, then the rings; what is left of --max-mem is
	 * the room a capture needs to be named and written (a quarter).
	 */
	size_t snaps_bytes = SNAPS * sizeof(struct snap);
	size_t rings = c.max_mem > snaps_bytes ? (c.max_mem - snaps_bytes) * 3 / 4 : 0;
	/* samples: the --keep window at this rate on every CPU, twice over; the rest for markers */
	double want = 2.0 * c.keep_s * c.hz * c.ncpus * sizeof(struct tl_sample);
	double share = want / rings > 0.5 ? 0.5 : want / rings;
	c.snaps = calloc(SNAPS, sizeof(*c.snaps));
	if (!c.snaps || timeline_init(&c.tl, rings, share) < 0) {
		error("out of memory for --max-mem %zu bytes", c.max_mem);
		teardown(&c);
		return EXIT_FAIL;
	}
	ret = tl_src_open(&c.src, &c.t, c.hz, true, c.usdt, &c.tl);
	if (ret) {
		teardown(&c);
		return ret;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	c.f.target = &c.t;
	frame_start(&c.f);
	c.start_ns = c.f.rl.start_ns;
	tl_src_started(&c.src, c.start_ns);
	c.next_eval_ns = c.start_ns + 1000000000ull;
	c.next_rotate_ns = c.start_ns + (uint64_t)(c.rotate_s * 1e9);
	evaluate(&c, c.start_ns); /* the first snapshot: figures are differences from it */
	fprintf(stderr, "tracing %s: keeping %.0f s (%zu samples, %zu transactions, %zu statements, "
		"%zu waits at most) in %s, %d trigger%s; SIGUSR2 captures now\n", target_describe(&c.t),
		c.keep_s, c.tl.samples.cap, c.tl.spans[TL_TXN].cap, c.tl.spans[TL_STMT].cap,
		c.tl.spans[TL_WAIT].cap, c.dir, c.ntrig, c.ntrig == 1 ? "" : "s");
	return frame_run(&c.f, &ops, &c);
}
