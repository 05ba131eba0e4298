/* dbtap profile --timeline: every sample with its time and thread, PostgreSQL's transactions, statements, checkpoints and waits, as text, JSON, SVG or a Firefox Profiler file; and the probes it shares with dbtap record. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/loader.h"
#include "bpf/pgmark.h"
#include "bpf/waitspan.h"
#include "cmd/frame.h"
#include "cmd/timeline.h"
#include "perf/event.h"
#include "perf/sample.h"
#include "pg/layout.h"
#include "pg/waitevent.h"
#include "profile/engine.h"
#include "profile/timeline.h"
#include "target/mem.h"
#include "util/error.h"
#include "util/runloop.h"

#define DEFAULT_HZ 99
#define DEFAULT_TOP 20
#define DEFAULT_MEM (256u << 20)

enum { OPT_TOP = FRAME_KEY_LONG, OPT_TIMELINE, OPT_NO_STMTS, OPT_CELLS, OPT_USDT };

static const struct frame_opt tl_opts[] = {
	{ "timeline", OPT_TIMELINE, no_argument, NULL, "this view (the word that selects it)",
	  FRAME_OPT_CMD, true },
	FRAME_OPTS_TARGET,
	{ "all", 'a', no_argument, NULL, "every process on the machine" },
	{ "freq", 'F', required_argument, "HZ", "samples per second per CPU (default 99)" },
	FRAME_OPT_DURATION,
	{ "top", OPT_TOP, required_argument, "N", "rows shown: the N busiest threads (default 20)" },
	{ "cells", OPT_CELLS, required_argument, "N",
	  "time slices of the JSON rows (default 60)" },
	{ "no-statements", OPT_NO_STMTS, no_argument, NULL,
	  "--pg: transactions and checkpoints only, no statement markers" },
	{ "usdt", OPT_USDT, no_argument, NULL,
	  "the transactions and statements from the USDT probes (a trap\n"
	  "each) instead of the backends' PgBackendStatus (15 and 16 have it)" },
	{ "output", 'o', required_argument, "FILE",
	  "FILE.svg: the timeline drawn; FILE.json.gz (or .json): the\n"
	  "Firefox Profiler's format (profiler.firefox.com, Perfetto)" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd tl_frame = {
	.name = "profile --timeline",
	.about =
		"Samples on-CPU stacks like dbtap profile, but keeps every sample with its time\n"
		"and thread, and with --pg the transactions, statements, checkpoints and waits of\n"
		"each backend. Shows one row per thread over time: a cell's shade is the share of\n"
		"that slice the thread spent on CPU. The transactions and statements are read\n"
		"from the backend's PgBackendStatus at its switches where dbtap knows the layout\n"
		"(PostgreSQL 15, 16), from the USDT probes otherwise (a trap at each).\n",
	.examples =
		"  dbtap profile --timeline --pg -d 10               text, the busiest backends\n"
		"  dbtap profile --timeline --pg -d 10 -o tl.svg     drawn, hover for stacks\n"
		"  dbtap profile --timeline -p 1234 -d 5 -o p.json.gz for profiler.firefox.com\n",
	.opts = tl_opts,
};

struct tl_cmd {
	struct frame f;
	struct target t;
	bool all, no_stmts, usdt;
	long hz;
	int top, cells;
	const char *out;
	struct tl_src src;
	struct timeline tl;
};

int tl_hz_opt(long *hz, const char *arg)
{
	char *end;

	errno = 0;
	*hz = strtol(arg, &end, 10);
	if (!*arg || *end || errno || *hz < 1 || *hz > sample_max_rate() - 1) {
		error("bad -F '%s'", arg);
		hint("samples per second per CPU, from 1 to %lld; 99 costs little",
		     (long long)sample_max_rate() - 1);
		return -1;
	}
	return 0;
}

static void on_sample(const struct profile_rec *r, void *arg)
{
	timeline_add_sample(arg, r);
}

static void on_mark(const struct pgmark_rec *r, const char *text, void *arg)
{
	timeline_add_mark(arg, r, text);
}

static void on_wait(const struct waitspan_rec *r, void *arg)
{
	timeline_add_wait(arg, r);
}

static void on_open_wait(const struct waitspan_rec *r, void *arg)
{
	timeline_add_open_wait(arg, r);
}

/* A cluster's own probes: its markers, then its waits. */
struct pg_side {
	struct tl_src *s;
	struct target *t;
	bool statements, usdt;
	int ret;
	char *msgs; /* what it said, held while it ran beside the engine */
};

/*
 * Whether the transactions and statements can be read from the backends' PgBackendStatus
 * at their switch-outs (pg/layout.c knows the row of 15 and 16), into m; why not in
 * s->marks_why.
 */
static bool switch_marks_find(struct pg_side *p, struct pgmark_switch_opts *m)
{
	struct tl_src *s = p->s;
	struct pg_bestatus b;
	uint8_t track = 1;

	if (p->usdt) {
		snprintf(s->marks_why, sizeof(s->marks_why), "--usdt");
		return false;
	}
	if (pg_bestatus_find(p->t->pg.major, p->t->pg.binary, p->t->pg.postmaster, &b) < 0) {
		snprintf(s->marks_why, sizeof(s->marks_why), "%s", b.why);
		return false;
	}
	if (bestatus_cfg_init(&m->cfg, &b, s->marks_why, sizeof(s->marks_why)) < 0)
		return false;
	/* with track_activities off the rows say nothing: the server's setting, inherited */
	if (mem_read(p->t->pg.postmaster, b.track_addr, &track, sizeof(track)) == 0 && !track) {
		snprintf(s->marks_why, sizeof(s->marks_why), "track_activities is off");
		return false;
	}
	m->records = true;
	m->statements = p->statements;
	return true;
}

/* The cluster's waits (and the markers read at the same switches, m not NULL). */
static int open_waits(struct tl_src *s, struct target *t, const struct pg_wait_word *w,
		      const struct pgmark_switch_opts *m)
{
	struct waitspan_probe_opts o = { .target = t, .marks = m };

	o.ptr_addr = w->ptr_addr;
	o.field_off = w->field_off;
	o.idle_event = pg_wait_event_lookup(t->pg.major, "Client", "ClientRead");
	if (!o.idle_event)
		o.idle_event = 0x06000000u; /* the first Client event in every version known */
	o.idle_class = PG_WAIT_CLASS_ACTIVITY;
	verbose("wait event: *%s + %u, at 0x%" PRIx64, w->loc.symbol, w->field_off, w->ptr_addr);
	return waitspan_probe_open(&s->ws, &o) ? -1 : 0;
}

/*
 * The waits' program loaded while pgmark's probes are being attached (a uprobe
 * registration waits for an RCU grace period): what the load says is held until
 * pgmark's attach is known and printed after what it says, as one after the other
 * would. When pgmark's attach failed, that failure is the result (*pm_ret) and the
 * waits are closed unsaid, as if never opened. Returns open_waits()'s result.
 */
static int open_waits_beside(struct tl_src *s, struct target *t, const struct pg_wait_word *w,
			     const struct pgmark_switch_opts *m, int *pm_ret)
{
	bool outer = error_stream() != stderr;
	char *before = outer ? error_capture_end() : NULL;
	char *said;
	int rc;

	error_capture_begin();
	rc = open_waits(s, t, w, m);
	said = error_capture_end();
	if (outer) {
		error_capture_begin();
		if (before)
			fputs(before, error_stream());
	}
	free(before);
	*pm_ret = pgmark_probe_attached(s->pm);
	if (*pm_ret) {
		waitspan_probe_destroy(s->ws);
		s->ws = NULL;
	} else if (said) {
		fputs(said, error_stream());
	}
	free(said);
	return rc;
}

static void pg_side_open(struct pg_side *p)
{
	struct tl_src *s = p->s;
	struct pgmark_probe_opts po = { .target = p->t, .binary = p->t->pg.binary,
					.major = p->t->pg.major, .statements = p->statements,
					.records = true };
	struct pgmark_switch_opts m;
	struct pg_wait_word w;
	bool waits = pg_wait_word_find(p->t->pg.major, p->t->pg.binary, p->t->pg.postmaster, &w) == 0;

	/* without the waits' program there is no switch-out to read the rows at */
	if (!waits)
		snprintf(s->marks_why, sizeof(s->marks_why), "no program at the switches");
	po.switch_marks = waits && switch_marks_find(p, &m);
	po.attach_later = po.switch_marks;
	p->ret = pgmark_probe_open(&s->pm, &po);
	if (p->ret)
		return;
	if (po.switch_marks) {
		pgmark_probe_fds(s->pm, &m.fds);
		int ws = open_waits_beside(s, p->t, &w, &m, &p->ret);
		if (p->ret)
			return;
		if (ws == 0) {
			s->switch_marks = true;
			verbose("transactions and statements: *MyBEEntry at 0x%" PRIx64 " read at the"
				" switch-outs (st_xact_start_timestamp +%u, st_activity_start_timestamp"
				" +%u, st_state_start_timestamp +%u, st_state +%u), aborts from"
				" transaction__abort", (uint64_t)m.cfg.beentry_addr, m.cfg.xact_ts_off,
				m.cfg.activity_ts_off, m.cfg.state_ts_off, m.cfg.state_off);
			return;
		}
		/* the markers from the probes after all: only the waits failed */
		snprintf(s->marks_why, sizeof(s->marks_why), "the program at the switches failed");
		pgmark_probe_destroy(s->pm);
		s->pm = NULL;
		po.switch_marks = false;
		p->ret = pgmark_probe_open(&s->pm, &po);
		if (p->ret)
			return;
		waits = false;
	}
	verbose("transactions and statements: USDT probes (%s)", s->marks_why);
	/* the samples and markers are worth having without the waits */
	if (!waits || open_waits(s, p->t, &w, NULL) < 0)
		warning("tracing %s without its wait spans", target_describe(p->t));
}

static void *pg_side_thread(void *arg)
{
	struct pg_side *p = arg;

	error_capture_begin();
	pg_side_open(p);
	p->msgs = error_capture_end();
	return NULL;
}

/*
 * The sampling engine (the processes' mappings, the profile program) and the cluster's
 * probes (pgmark, waitspan) share nothing until the run: they load and attach on two
 * threads at once, most of it the kernel verifying and creating links, which halves
 * the wait for "tracing" where a CPU is free. What the cluster's side says is printed
 * after the engine's, and not at all after the engine failed, as one thread would.
 */
int tl_src_open(struct tl_src *s, struct target *t, long hz, bool statements, bool usdt,
		struct timeline *tl)
{
	struct pg_side side = { .s = s, .t = t, .statements = statements, .usdt = usdt };
	pthread_t th;
	bool beside = false;
	int ret;

	memset(s, 0, sizeof(*s));
	s->hz = hz;
	if (perf_event_parse("cpu-clock", &s->ev) < 0)
		return EXIT_FAIL;
	s->ev.attr.sample_period = 1000000000ull / hz;
	struct profile_opts o = { .t = t, .ev = &s->ev, .user = true, .kernel = true, .ring = true };
	if (t->kind == TARGET_PG) {
		tl->pg_major = t->pg.major;
		bpf_loader_prepare();
		beside = pthread_create(&th, NULL, pg_side_thread, &side) == 0;
	}
	ret = prof_engine_open(&s->e, t, &o);
	if (beside) {
		pthread_join(th, NULL);
		if (!ret) {
			if (side.msgs)
				fputs(side.msgs, stderr);
			ret = side.ret;
		}
		free(side.msgs);
	} else if (!ret && t->kind == TARGET_PG) {
		pg_side_open(&side);
		ret = side.ret;
	}
	if (ret)
		tl_src_free(s);
	return ret;
}

const char *tl_src_marks_from(const struct tl_src *s)
{
	return !s->pm ? NULL : s->switch_marks ? "PgBackendStatus" : "usdt";
}

void tl_src_started(struct tl_src *s, uint64_t start_ns)
{
	struct timespec rt;

	s->start_ns = start_ns;
	clock_gettime(CLOCK_REALTIME, &rt);
	s->start_realtime_s = rt.tv_sec + rt.tv_nsec / 1e9 - (now_ns() - start_ns) / 1e9;
}

void tl_src_poll(struct tl_src *s, struct timeline *tl)
{
	prof_engine_poll(s->e, on_sample, tl);
	if (s->pm)
		pgmark_probe_consume(s->pm, on_mark, tl);
	if (s->ws)
		waitspan_probe_consume(s->ws, on_wait, tl);
}

void tl_src_open_waits(struct tl_src *s, struct timeline *tl, uint64_t t_ns)
{
	timeline_clear_open_waits(tl);
	if (s->ws)
		waitspan_probe_open_waits(s->ws, t_ns, on_open_wait, tl);
}

void tl_src_lost(struct tl_src *s, struct tl_src_lost *l)
{
	struct pgmark_totals *pt = malloc(sizeof(*pt));
	uint64_t ws[WAITSPAN_ST_MAX];

	memset(l, 0, sizeof(*l));
	if (s->pm && pt && pgmark_probe_read(s->pm, pt) == 0) {
		l->marks_ring_full = pt->stats[PGMARK_ST_RING_FULL];
		l->marks_threads_full = pt->stats[PGMARK_ST_THREADS_FULL];
	}
	free(pt);
	if (s->ws && waitspan_probe_stats(s->ws, ws) == 0) {
		l->waits_ring_full = ws[WAITSPAN_ST_RING_FULL];
		l->waits_threads_full = ws[WAITSPAN_ST_THREADS_FULL];
	}
}

void tl_src_free(struct tl_src *s)
{
	waitspan_probe_destroy(s->ws);
	pgmark_probe_destroy(s->pm);
	prof_engine_free(s->e);
	s->ws = NULL;
	s->pm = NULL;
	s->e = NULL;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct tl_cmd *c = ctx;

	switch (key) {
	case OPT_TIMELINE:
		return 0;
	case 'a':
		c->all = true;
		return 0;
	case OPT_NO_STMTS:
		c->no_stmts = true;
		return 0;
	case OPT_USDT:
		c->usdt = true;
		return 0;
	case 'F':
		return tl_hz_opt(&c->hz, arg);
	case OPT_TOP:
		return top_opt(&c->top, arg, "threads");
	case OPT_CELLS:
		if (top_opt(&c->cells, arg, "time slices") < 0)
			return -1;
		if (c->cells > 10000) {
			error("bad --cells '%s'", arg);
			hint("from 1 to 10000 time slices");
			return -1;
		}
		return 0;
	case 'o':
		if (!tl_output_kind(arg)) {
			error("cannot tell what to write to '%s'", arg);
			hint("-o FILE.svg draws the timeline, -o FILE.json.gz writes the Firefox "
			     "Profiler's format");
			return -1;
		}
		c->out = arg;
		return 0;
	}
	return -1;
}

enum tl_output tl_output_kind(const char *path)
{
	size_t l = strlen(path);

	if (l > 4 && !strcmp(path + l - 4, ".svg"))
		return TL_OUT_SVG;
	if (l > 8 && !strcmp(path + l - 8, ".json.gz"))
		return TL_OUT_GECKO_GZ;
	if (l > 5 && !strcmp(path + l - 5, ".json"))
		return TL_OUT_GECKO;
	return TL_OUT_NONE;
}

int tl_write_file(const struct tl_model *m, const char *path, int top, double start_realtime_s)
{
	char tmp[4096];
	enum tl_output k = tl_output_kind(path);
	FILE *f = NULL;
	int r;

	/* written beside, renamed when whole: a reader never sees half a file */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		error("file name '%s' is too long", path);
		return -1;
	}
	if (k == TL_OUT_GECKO_GZ) {
		r = tl_write_gecko_gz(m, tmp, start_realtime_s);
	} else {
		f = fopen(tmp, "w");
		if (!f) {
			error_errno("cannot write '%s'", path);
			hint("check that the directory exists and is writable");
			return -1;
		}
		r = k == TL_OUT_SVG ? tl_write_svg(m, f, top) : tl_write_gecko(m, f, start_realtime_s);
		if (fclose(f) != 0)
			r = -1;
	}
	if (r < 0 || rename(tmp, path) < 0) {
		error_errno("cannot write '%s'", path);
		hint("check that the directory exists and has free space");
		remove(tmp);
		return -1;
	}
	return 0;
}

void tl_json_rows(struct json *j, const struct tl_model *m, int top, int ncells)
{
	uint32_t *cells = calloc(ncells, sizeof(*cells));
	size_t n = m->nrows;

	if (top > 0 && n > (size_t)top)
		n = top;
	json_double(j, "t0_s", m->t0_s);
	json_double(j, "t1_s", m->t1_s);
	json_int(j, "cells", ncells);
	json_double(j, "cell_s", (m->t1_s - m->t0_s) / ncells);
	json_array_begin(j, "threads");
	for (size_t i = 0; i < n && cells; i++) {
		const struct tl_row *r = &m->rows[i];
		json_object_begin(j, NULL);
		json_int(j, "pid", r->pid);
		json_int(j, "tid", r->tid);
		json_str(j, "type", r->type);
		json_str(j, "name", r->name);
		json_uint(j, "samples", r->nticks);
		tl_row_cells(m, r, ncells, cells);
		json_array_begin(j, "cell_samples");
		for (int c = 0; c < ncells; c++)
			json_uint(j, NULL, cells[c]);
		json_array_end(j);
		json_array_begin(j, "spans");
		for (size_t k = 0; k < r->nmarks; k++) {
			const struct tl_mark *mk = &r->marks[k];
			json_object_begin(j, NULL);
			json_str(j, "kind", mk->kind == TL_TXN ? "transaction" :
				 mk->kind == TL_STMT ? "statement" : mk->kind == TL_WAIT ? "wait" :
				 "checkpoint");
			json_double(j, "start_s", mk->t0_s);
			json_double(j, "end_s", mk->t1_s);
			if (mk->kind == TL_TXN)
				json_bool(j, "aborted", mk->flags & TL_ABORTED);
			if (mk->kind == TL_STMT)
				json_str(j, "query", mk->text);
			if (mk->kind == TL_WAIT) {
				json_str(j, "event", mk->text);
				json_bool(j, "in_progress", mk->flags & TL_WAITING);
			}
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	free(cells);
}

static bool poll(void *ctx)
{
	struct tl_cmd *c = ctx;

	tl_src_poll(&c->src, &c->tl);
	return true;
}

static void report(void *ctx, const struct frame_report *fr)
{
	struct tl_cmd *c = ctx;
	struct tl_model m;
	struct prof_stats st = { 0 };
	struct profile_counts pc = { 0 };
	struct tl_src_lost sl;
	char sub[512];
	uint64_t ring_lost = 0, mark_lost, start_ns = c->src.start_ns;

	poll(c);
	if (prof_engine_read(c->src.e, &pc) == 0) {
		ring_lost = pc.stats[PROFILE_ST_RING_FULL];
		prof_engine_stats(&pc, &st);
		profile_counts_free(&pc);
	}
	tl_src_lost(&c->src, &sl);
	mark_lost = sl.marks_ring_full + sl.marks_threads_full + sl.waits_ring_full +
		    sl.waits_threads_full;
	snprintf(sub, sizeof(sub), "%s, cpu-clock at %ld Hz, %.1f s", target_describe(&c->t), c->hz,
		 fr->span_s);
	struct tl_build b = {
		.t0_ns = start_ns,
		.t1_ns = start_ns + (uint64_t)(fr->span_s * 1e9),
		.start_ns = start_ns,
		.hz = c->hz,
		.by = c->t.kind == TARGET_PG ? PROF_BY_PID : PROF_BY_THREAD,
		.title = "dbtap timeline",
		.subtitle = sub,
	};
	struct prof_stats bst = { 0 };
	tl_src_open_waits(&c->src, &c->tl, b.t1_ns);
	if (timeline_build(&c->tl, c->src.e, &b, &m, &bst) < 0) {
		error("out of memory building the timeline");
		tl_model_free(&m);
		return;
	}
	if (c->out)
		tl_write_file(&m, c->out, c->top, c->src.start_realtime_s);
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin(&j, fr);
		json_str(&j, "view", "timeline");
		json_int(&j, "frequency_hz", c->hz);
		if (tl_src_marks_from(&c->src))
			json_str(&j, "markers_from", tl_src_marks_from(&c->src));
		json_double(&j, "start_realtime_s", c->src.start_realtime_s);
		json_double(&j, "start_monotonic_s", start_ns / 1e9);
		json_uint(&j, "samples", m.samples);
		json_object_begin(&j, "lost");
		json_uint(&j, "ring_full", ring_lost);
		json_uint(&j, "kept_full", c->tl.samples.dropped);
		json_uint(&j, "marks_ring_full", sl.marks_ring_full);
		json_uint(&j, "marks_threads_full", sl.marks_threads_full);
		json_uint(&j, "waits_ring_full", sl.waits_ring_full);
		json_uint(&j, "waits_threads_full", sl.waits_threads_full);
		json_uint(&j, "marks_kept_full", m.marks_lost);
		json_uint(&j, "stack_map_full", st.lost_stacks);
		json_object_end(&j);
		tl_json_rows(&j, &m, c->top, c->cells ? c->cells : 60);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	} else {
		tl_write_text(&m, stdout, c->top ? c->top : DEFAULT_TOP, 100);
		if (ring_lost || mark_lost || c->tl.samples.dropped || m.marks_lost || st.lost_stacks)
			printf("lost: %" PRIu64 " samples (ring full), %" PRIu64 " (stack map full), %"
			       PRIu64 " markers (ring full), %" PRIu64 " kept ones pushed out\n",
			       ring_lost, st.lost_stacks, mark_lost, c->tl.samples.dropped + m.marks_lost);
		if (c->t.kind != TARGET_NONE && !strcmp(fr->end, "target exited"))
			printf("the target exited during the profile\n");
	}
	fflush(stdout);
	tl_model_free(&m);
}

static void teardown(void *ctx)
{
	struct tl_cmd *c = ctx;

	tl_src_free(&c->src);
	timeline_free(&c->tl);
	target_free(&c->t);
}

int cmd_profile_timeline(int argc, char **argv)
{
	struct tl_cmd c = { .hz = DEFAULT_HZ };
	const struct frame_ops ops = {
		.report = report,
		.poll = poll,
		.poll_ms = 100,
		.teardown = teardown,
		.teardown_what = "detaching the profile probes",
	};
	int ret;

	ret = frame_parse(&c.f, &tl_frame, argc, argv, on_opt, &c);
	if (ret)
		return frame_status(ret);
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("profile --timeline takes options only; see 'dbtap profile --timeline --help'");
		return EXIT_USAGE;
	}
	if (c.all && (c.f.to.pg_set || c.f.to.pids || c.f.to.tid)) {
		error("-a and a target together");
		hint("-a samples every process; --pg, -p or -t only those");
		return EXIT_USAGE;
	}
	if (!c.all && !c.f.to.pg_set && !c.f.to.pids && !c.f.to.tid) {
		error("profile --timeline needs a target");
		hint("--pg (the only cluster), --pg DATADIR, -p PID, -t TID, or -a for every process");
		return EXIT_USAGE;
	}
	ret = target_resolve(&c.t, &c.f.to, !c.all);
	if (ret)
		return ret;
	if (timeline_init(&c.tl, DEFAULT_MEM, 0.25) < 0) {
		error("out of memory");
		target_free(&c.t);
		return EXIT_FAIL;
	}
	ret = tl_src_open(&c.src, &c.t, c.hz, !c.no_stmts, c.usdt, &c.tl);
	if (ret) {
		teardown(&c);
		return ret;
	}
	c.f.target = c.t.kind == TARGET_NONE ? NULL : &c.t;
	frame_start(&c.f);
	tl_src_started(&c.src, c.f.rl.start_ns);
	fprintf(stderr, "tracing %s: cpu-clock at %ld Hz, every sample with its time%s%s%s;"
		" Ctrl-C to stop\n", target_describe(&c.t), c.hz,
		c.src.pm ? ", transactions, statements, checkpoints" : "",
		!c.src.pm ? "" : c.src.switch_marks ? " (PgBackendStatus)" : " (USDT)",
		c.src.ws ? ", waits" : "");
	/* read while it samples, not before "tracing": the report names them (a recorder
	 * reads them at its first capture) */
	prof_engine_preload_kernel(c.src.e);
	return frame_run(&c.f, &ops, &c);
}
