/* The frame every command stands on: one option table, one run loop, one JSON envelope. */
#ifndef DBTAP_CMD_FRAME_H
#define DBTAP_CMD_FRAME_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "target/target.h"
#include "util/error.h"
#include "util/json.h"
#include "util/runloop.h"

/*
 * One row per option. The getopt_long table, the short-option string, the synopsis
 * ("usage: dbtap tps [--pg [TARGET] | -p PID[,PID] | -t TID] [-i SECS] ...") and the
 * options list of --help are all made from these rows, so they cannot drift apart.
 *
 * key is what the command's callback receives: a letter for an option that has a short
 * form (-i), a value from FRAME_KEY_LONG up for a long-only one (--hist). Rows whose
 * handler is not FRAME_OPT_CMD are handled by the frame itself.
 */
enum frame_opt_handler {
	FRAME_OPT_CMD,    /* the command's callback */
	FRAME_OPT_GLOBAL, /* -j, -v */
	FRAME_OPT_TARGET, /* --pg, -p, -t: into frame.to */
	FRAME_OPT_TIME,   /* -i, -d: into frame.time */
};

#define FRAME_KEY_LONG 256

struct frame_opt {
	const char *name;  /* long name, or NULL */
	int key;           /* short letter, or FRAME_KEY_LONG + n for long-only options */
	int has_arg;       /* no_argument, required_argument, optional_argument */
	const char *arg;   /* the value's name in usage: "SECS", "pid|type" */
	const char *help;  /* the options list; '\n' starts an indented continuation line */
	enum frame_opt_handler handler;
	bool hidden;       /* accepted, not shown (deprecated spellings) */
};

/* Rows every tracing command takes; a command may write its own row for one of them. */
#define FRAME_KEY_PG (FRAME_KEY_LONG - 1) /* --pg, handed to target_opt() as 'P' */
#define FRAME_OPT_JSON \
	{ "json", 'j', no_argument, NULL, "one JSON object per line (docs/json.md)", FRAME_OPT_GLOBAL }
#define FRAME_OPT_VERBOSE \
	{ "verbose", 'v', no_argument, NULL, "libbpf's messages and dbtap's own chatter", \
	  FRAME_OPT_GLOBAL }
#define FRAME_OPT_PG \
	{ "pg", FRAME_KEY_PG, optional_argument, "TARGET", \
	  "every process of a cluster, later backends included: a data\n" \
	  "directory, a port or a postmaster pid (alone: the only cluster)", FRAME_OPT_TARGET }
#define FRAME_OPT_PID \
	{ "pid", 'p', required_argument, "PID[,PID]", "those processes and all their threads", \
	  FRAME_OPT_TARGET }
#define FRAME_OPT_TID \
	{ "tid", 't', required_argument, "TID", "one thread", FRAME_OPT_TARGET }
#define FRAME_OPT_INTERVAL \
	{ "interval", 'i', required_argument, "SECS", \
	  "a report every SECS (default: only the summary; 0: the same)", FRAME_OPT_TIME }
#define FRAME_OPT_DURATION \
	{ "duration", 'd', required_argument, "SECS", \
	  "stop after SECS (default: Ctrl-C, or when the target exits)", FRAME_OPT_TIME }

#define FRAME_OPTS_GLOBAL FRAME_OPT_JSON, FRAME_OPT_VERBOSE
#define FRAME_OPTS_TARGET FRAME_OPT_PG, FRAME_OPT_PID, FRAME_OPT_TID
#define FRAME_OPTS_TIME FRAME_OPT_INTERVAL, FRAME_OPT_DURATION
#define FRAME_OPT_END { NULL, 0, 0, NULL, NULL, FRAME_OPT_CMD }

/* What --help prints besides the options: written once per command. */
struct frame_cmd {
	const char *name;     /* "tps" */
	const char *args;     /* the synopsis' words after the options: "START END..."; or NULL */
	const char *more;     /* further synopsis lines, as written ("dbtap latency query ..."), or NULL */
	const char *about;    /* what the command answers, paragraphs ending in '\n' */
	const char *examples; /* lines "  dbtap ...   what it does\n", or NULL */
	const struct frame_opt *opts; /* ends with FRAME_OPT_END; -h/--help is added */
};

/*
 * One command's run: the words the frame parsed, the target it watches, the clock.
 * Zero it (or give defaults such as time.interval) before frame_parse().
 */
struct frame {
	const struct frame_cmd *cmd;
	struct target_opts to;
	struct time_opts time;
	struct target *target;   /* set before frame_run(): its exit ends the run; NULL: none */
	struct runloop rl;
	const char *end;         /* why the run ended: "duration", "interrupted", "target exited" */
};

/* The usage text, from the table. */
void frame_usage(const struct frame_cmd *fc, FILE *f);

/*
 * Parses argv (argv[0] is the command's name; main.c has reset getopt). Global, target
 * and time options go into f; every other one to on_opt(ctx, key, optarg), which
 * returns 0, or -1 after printing an error and a hint. On return optind is the first
 * word that is not an option.
 * Returns 0 (go on), EXIT_USAGE (message printed) or FRAME_HELP (help printed on
 * stdout): a command returns frame_status() of anything but 0.
 */
#define FRAME_HELP (-1)
int frame_parse(struct frame *f, const struct frame_cmd *fc, int argc, char **argv,
		int (*on_opt)(void *ctx, int key, const char *arg), void *ctx);
static inline int frame_status(int r)
{
	return r == FRAME_HELP ? EXIT_OK : r;
}

/* A report the run loop asks for. */
enum frame_kind { FRAME_INTERVAL, FRAME_SUMMARY };
struct frame_report {
	enum frame_kind kind;
	double time_s; /* seconds since frame_start(), now */
	double span_s; /* what the report covers: the interval, or the whole run (summary) */
	const char *end; /* summary: why the run ended (frame.end) */
};

struct frame_ops {
	/* An interval's or the summary's figures, on stdout (text or one NDJSON line). */
	void (*report)(void *ctx, const struct frame_report *r);
	/* Every poll_ms (default 200): drain events, refresh state; false ends the run. */
	bool (*poll)(void *ctx);
	int poll_ms;
	/*
	 * After the summary: detach and free. A signal during it exits at once (the
	 * summary is out); when it takes over half a second, stderr says so, with what.
	 */
	void (*teardown)(void *ctx);
	const char *teardown_what; /* "detaching probes"; NULL: "cleaning up" */
};

/*
 * Installs the SIGINT/SIGTERM handlers and starts the clock: call it before telling the
 * user (or a script) that tracing has begun. Calling it again restarts the clock.
 */
void frame_start(struct frame *f);
/*
 * Waits, reporting every interval, until -d, a signal, the target's exit or ops->poll
 * ends the run; then the partial last interval (when -i is given, so that intervals
 * add up to the summary), the summary, and the teardown. Returns EXIT_OK.
 */
int frame_run(struct frame *f, const struct frame_ops *ops, void *ctx);
/* Seconds since frame_start(): the "time_s" of an event. */
double frame_time_s(const struct frame *f);
/* A kernel CLOCK_MONOTONIC timestamp (bpf_ktime_get_ns) as seconds since frame_start(). */
double frame_ktime_s(const struct frame *f, unsigned long long ns);

/*
 * The envelope of docs/json.md: begins an NDJSON object with "report" and "time_s",
 * then "interval_s" or "duration_s" (and the summary's "end"). The caller adds its
 * keys, ends the object and flushes the line.
 */
void frame_json_begin(struct json *j, const struct frame_report *r);
/* The same for a command's own kinds ("event", "config", "row", "cluster"...). */
void frame_json_begin_kind(struct json *j, const char *report, double time_s);

/*
 * Text layout: an interval line starts with the stamp "%9.3f" (seconds since start,
 * like time_s); the summary starts with a blank line and "total over S s". Prints that
 * head, no newline.
 */
void frame_text_head(FILE *out, const struct frame_report *r);

/* max(width, strlen(s)): over a report's rows, a column as wide as its widest name. */
int frame_width(int width, const char *s);

#endif
