/* The command frame: option table -> getopt_long and --help, the report loop, the JSON envelope. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/frame.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/phase.h"

#define USAGE_WIDTH 88 /* synopsis lines wrap here */
#define HELP_COLUMN 24 /* where an option's help starts (a longer spec gets a line of its own) */

static const struct frame_opt help_row = {
	"help", 'h', no_argument, NULL, "this text", FRAME_OPT_CMD,
};

static bool has_short(const struct frame_opt *o)
{
	return o->key > 0 && o->key < 128 && isalnum(o->key);
}

static int nrows(const struct frame_opt *opts)
{
	int n = 0;

	while (opts && (opts[n].name || opts[n].key))
		n++;
	return n;
}

/* "-i SECS", "--hist SPEC", "--pg [TARGET]": how the synopsis spells an option. */
static void spell_short(struct strbuf *sb, const struct frame_opt *o)
{
	if (has_short(o))
		strbuf_addf(sb, "-%c", o->key);
	else
		strbuf_addf(sb, "--%s", o->name);
	if (!o->arg)
		return;
	if (o->has_arg == optional_argument)
		strbuf_addf(sb, " [%s]", o->arg);
	else
		strbuf_addf(sb, " %s", o->arg);
}

/* "-i, --interval SECS": the options list's left column. */
static void spell_long(struct strbuf *sb, const struct frame_opt *o)
{
	if (has_short(o))
		strbuf_addf(sb, "-%c%s", o->key, o->name ? ", " : "");
	else
		strbuf_addstr(sb, "    ");
	if (o->name)
		strbuf_addf(sb, "--%s", o->name);
	if (!o->arg)
		return;
	if (o->has_arg == optional_argument)
		strbuf_addf(sb, " [%s]", o->arg);
	else
		strbuf_addf(sb, " %s", o->arg);
}

/* Appends word to the synopsis, wrapping under the first word after the command name. */
static void synopsis_add(FILE *f, int *col, int indent, const char *word)
{
	int len = (int)strlen(word);

	if (*col + 1 + len > USAGE_WIDTH && *col > indent) {
		fprintf(f, "\n%*s", indent, "");
		*col = indent;
	} else {
		fputc(' ', f);
		(*col)++;
	}
	fputs(word, f);
	*col += len;
}

void frame_usage(const struct frame_cmd *fc, FILE *f)
{
	const struct frame_opt *opts = fc->opts;
	int n = nrows(opts), col, indent;
	struct strbuf sb = STRBUF_INIT;

	col = fprintf(f, "usage: dbtap %s", fc->name);
	indent = col + 1;
	if (fc->args)
		synopsis_add(f, &col, indent, fc->args);
	/* The target options exclude each other: one bracket, "|" between them. */
	for (int i = 0; i < n; i++) {
		if (opts[i].handler != FRAME_OPT_TARGET || opts[i].hidden)
			continue;
		strbuf_addstr(&sb, sb.len ? " | " : "[");
		spell_short(&sb, &opts[i]);
	}
	if (sb.len) {
		strbuf_addch(&sb, ']');
		synopsis_add(f, &col, indent, sb.buf);
	}
	for (int pass = 0; pass < 2; pass++) {
		/* the command's own options first, -j and -v last */
		for (int i = 0; i < n; i++) {
			const struct frame_opt *o = &opts[i];
			if (o->hidden || o->handler == FRAME_OPT_TARGET ||
			    (o->handler == FRAME_OPT_GLOBAL) != (pass == 1))
				continue;
			strbuf_reset(&sb);
			strbuf_addch(&sb, '[');
			spell_short(&sb, o);
			strbuf_addch(&sb, ']');
			synopsis_add(f, &col, indent, sb.buf);
		}
	}
	fputc('\n', f);
	for (const char *m = fc->more; m && *m;) {
		const char *nl = strchr(m, '\n');
		int len = nl ? (int)(nl - m) : (int)strlen(m);
		fprintf(f, "       %.*s\n", len, m);
		m += len + (nl != NULL);
	}
	fputc('\n', f);
	if (fc->about)
		fputs(fc->about, f);
	fprintf(f, "%soptions:\n", fc->about ? "\n" : "");
	for (int i = 0; i <= n; i++) {
		const struct frame_opt *o = i < n ? &opts[i] : &help_row;
		const char *h = o->help ? o->help : "";
		if (o->hidden)
			continue;
		strbuf_reset(&sb);
		spell_long(&sb, o);
		if ((int)sb.len > HELP_COLUMN - 4)
			fprintf(f, "  %s\n%*s", sb.buf, HELP_COLUMN, "");
		else
			fprintf(f, "  %-*s", HELP_COLUMN - 2, sb.buf);
		for (;;) {
			const char *nl = strchr(h, '\n');
			if (!nl) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
			h = nl + 1;
		}
	}
	if (fc->examples)
		fprintf(f, "\nexamples:\n%s", fc->examples);
	strbuf_release(&sb);
}

int frame_parse(struct frame *f, const struct frame_cmd *fc, int argc, char **argv,
		int (*on_opt)(void *ctx, int key, const char *arg), void *ctx)
{
	int n = nrows(fc->opts), opt, ret = 0;
	struct option *longopts = calloc(n + 2, sizeof(*longopts));
	struct strbuf shortopts = STRBUF_INIT;

	if (!longopts)
		return error("out of memory"), EXIT_FAIL;
	f->cmd = fc;
	/* ':' first: a missing value comes back as ':', told apart from an unknown option */
	strbuf_addch(&shortopts, ':');
	for (int i = 0, k = 0; i <= n; i++) {
		const struct frame_opt *o = i < n ? &fc->opts[i] : &help_row;
		if (o->name)
			longopts[k++] = (struct option){ o->name, o->has_arg, NULL, o->key };
		if (has_short(o))
			strbuf_addf(&shortopts, "%c%s", o->key, o->has_arg == required_argument ? ":" :
				    o->has_arg == optional_argument ? "::" : "");
	}

	opterr = 0;
	while (!ret && (opt = getopt_long(argc, argv, shortopts.buf, longopts, NULL)) != -1) {
		const struct frame_opt *o = NULL;

		for (int i = 0; i < n && !o; i++)
			if (fc->opts[i].key == opt)
				o = &fc->opts[i];
		if (opt == 'h' && !o) {
			frame_usage(fc, stdout);
			ret = FRAME_HELP;
			break;
		}
		if (!o) {
			ret = cmd_bad_option(fc->name, opt, argv);
			break;
		}
		switch (o->handler) {
		case FRAME_OPT_GLOBAL:
			global_opt(opt);
			break;
		case FRAME_OPT_TARGET:
			target_opt(&f->to, opt == FRAME_KEY_PG ? 'P' : opt, argc, argv);
			break;
		case FRAME_OPT_TIME:
			if (time_opt(&f->time, opt, optarg) < 0)
				ret = EXIT_USAGE;
			break;
		case FRAME_OPT_CMD:
			if (!on_opt || on_opt(ctx, opt, optarg) < 0)
				ret = EXIT_USAGE;
			break;
		}
	}
	free(longopts);
	strbuf_release(&shortopts);
	return ret;
}

void frame_start(struct frame *f)
{
	phase_mark("ready");
	runloop_init(&f->rl, f->time.interval, f->time.duration);
}

double frame_time_s(const struct frame *f)
{
	return (now_ns() - f->rl.start_ns) / 1e9;
}

double frame_ktime_s(const struct frame *f, unsigned long long ns)
{
	return ns > f->rl.start_ns ? (ns - f->rl.start_ns) / 1e9 : 0.0;
}

struct run_state {
	struct frame *f;
	const struct frame_ops *ops;
	void *ctx;
	bool target_gone, cmd_done;
};

/* The one poll check: the command's own work, then whether the target still runs. */
static bool run_check(void *arg)
{
	struct run_state *st = arg;

	if (st->ops->poll && !st->ops->poll(st->ctx)) {
		st->cmd_done = true;
		return false;
	}
	if (st->f->target && st->f->target->kind != TARGET_NONE && !target_alive(st->f->target)) {
		st->target_gone = true;
		return false;
	}
	return true;
}

/*
 * Seconds since the start at t, in whole microseconds: the precision the reports print
 * (docs/json.md), so that every figure a command derives from a span (rates, ratios)
 * uses the span it prints, and spans taken from these add up exactly.
 */
static uint64_t since_start_us(const struct frame *f, uint64_t t)
{
	return t > f->rl.start_ns ? (t - f->rl.start_ns + 500) / 1000 : 0;
}

static double since_start_s(const struct frame *f, uint64_t t)
{
	return since_start_us(f, t) / 1e6;
}

/* An interval report up to now: the span since the previous one. */
static void report_interval(struct run_state *st, uint64_t now)
{
	struct frame *f = st->f;
	struct frame_report r = {
		.kind = FRAME_INTERVAL,
		.time_s = since_start_s(f, now),
		.span_s = (since_start_us(f, now) - since_start_us(f, f->rl.last_ns)) / 1e6,
	};

	f->rl.last_ns = now;
	st->ops->report(st->ctx, &r);
}

/*
 * DBTAP_TEST_SLOW_TEARDOWN_MS: the tests' way to make a teardown last (a real one is
 * fast on an idle machine), to check the note and that a second Ctrl-C ends it while
 * the kernel still releases everything.
 */
static void test_slow_teardown(void)
{
	const char *v = getenv("DBTAP_TEST_SLOW_TEARDOWN_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;
	struct timespec ts;

	if (ms <= 0 || ms > 60000)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		; /* the note's alarm: go on sleeping what is left */
}

int frame_run(struct frame *f, const struct frame_ops *ops, void *ctx)
{
	struct run_state st = { .f = f, .ops = ops, .ctx = ctx };
	enum runloop_event ev;
	uint64_t end;

	for (;;) {
		ev = runloop_wait(&f->rl, ops->poll_ms > 0 ? ops->poll_ms : 200, run_check, &st);
		if (ev != RUNLOOP_TICK)
			break;
		report_interval(&st, now_ns());
	}
	end = now_ns();
	if (ev == RUNLOOP_STOPPED)
		f->end = "interrupted";
	else if (st.target_gone)
		f->end = "target exited";
	else if (!st.cmd_done || !f->end)
		f->end = "duration";
	if (st.target_gone)
		warning("%s exited; stopping after %.1f s", target_describe(f->target),
			(end - f->rl.start_ns) / 1e9);

	/* The tail since the last tick: intervals add up to the summary. */
	if (f->time.interval > 0)
		report_interval(&st, end);
	struct frame_report r = {
		.kind = FRAME_SUMMARY,
		.time_s = since_start_s(f, end),
		.span_s = since_start_s(f, end),
		.end = f->end,
	};
	ops->report(ctx, &r);
	fflush(stdout);

	runloop_teardown_begin(ops->teardown_what ? ops->teardown_what : "cleaning up", 500);
	test_slow_teardown();
	if (ops->teardown)
		ops->teardown(ctx);
	runloop_teardown_end();
	return EXIT_OK;
}

/* Microseconds: the precision docs/json.md promises for times since the start. */
static double round_us(double s)
{
	return round(s * 1e6) / 1e6;
}

void frame_json_begin_kind(struct json *j, const char *report, double time_s)
{
	json_report_begin(j, report, time_s);
}

void frame_json_begin(struct json *j, const struct frame_report *r)
{
	frame_json_begin_kind(j, r->kind == FRAME_SUMMARY ? "summary" : "interval", r->time_s);
	json_double(j, r->kind == FRAME_SUMMARY ? "duration_s" : "interval_s", round_us(r->span_s));
	if (r->kind == FRAME_SUMMARY)
		json_str(j, "end", r->end ? r->end : "duration");
}

void frame_text_head(FILE *out, const struct frame_report *r)
{
	if (r->kind == FRAME_SUMMARY)
		fprintf(out, "\ntotal over %.1f s: ", r->span_s);
	else
		fprintf(out, "%9.3f  ", r->time_s);
}

int frame_width(int width, const char *s)
{
	int len = s ? (int)strlen(s) : 0;

	return len > width ? len : width;
}
