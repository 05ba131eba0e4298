/* The command table's contract: one entry point per command, options parsed inside it. */
#ifndef DBTAP_CMD_CMD_H
#define DBTAP_CMD_CMD_H

#include <stdbool.h>

/* Options accepted before or after the command name. */
struct global_opts {
	bool json;    /* -j/--json: NDJSON on stdout, one object per report line */
	bool verbose; /* -v/--verbose: libbpf's debug output and dbtap's own chatter */
};

extern struct global_opts global;

/*
 * Each command gets argv with argv[0] = the command name, returns an exit status
 * (EXIT_OK, EXIT_FAIL, EXIT_USAGE from util/error.h). It must detach everything it
 * attached on every return path.
 */
int cmd_doctor(int argc, char **argv);
int cmd_pg(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_tps(int argc, char **argv);
int cmd_latency(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_wait(int argc, char **argv);
/* profile --timeline: cmd_profile hands the whole command line over. */
int cmd_profile_timeline(int argc, char **argv);
int cmd_record(int argc, char **argv);

/*
 * getopt_long helpers every command uses the same way: -j and -v are accepted in any
 * command's option list. Returns true when opt was a global option and was consumed.
 */
bool global_opt(int opt);
#define GLOBAL_SHORTOPTS "jv"
#define GLOBAL_LONGOPTS { "json", no_argument, NULL, 'j' }, { "verbose", no_argument, NULL, 'v' }

/*
 * After getopt_long returned '?' or ':' (commands set opterr = 0 and start their
 * short options with ':'): names the offending word, hints at --help, returns EXIT_USAGE.
 */
int cmd_bad_option(const char *cmd, int opt, char **argv);

/* -i SECONDS and -d SECONDS: the same words and checks in every tracing command. */
struct time_opts {
	double interval; /* 0: no interval reports */
	double duration; /* 0: until Ctrl-C or the target exits */
};
#define TIME_LONGOPTS { "interval", required_argument, NULL, 'i' }, \
		      { "duration", required_argument, NULL, 'd' }
#define TIME_SHORTOPTS "i:d:"
/*
 * 1: opt was -i/-d and is stored; 0: not a time option; -1: bad value (error printed).
 * -i 0 is allowed (no interval reports), -d 0 is not.
 */
int time_opt(struct time_opts *t, int opt, const char *arg);

/*
 * What every tracing command accepts: -j, -v, --pg/-p/-t and -i/-d, as one table
 * fragment, one short-option string and one call in the getopt loop.
 */
struct target_opts;
#define TRACING_LONGOPTS GLOBAL_LONGOPTS, TARGET_LONGOPTS, TIME_LONGOPTS
#define TRACING_SHORTOPTS GLOBAL_SHORTOPTS TIME_SHORTOPTS "p:t:"
/* 1: consumed; 0: not one of them; -1: bad value (error and hint printed). */
int tracing_opt(struct target_opts *to, struct time_opts *t, int opt, int argc, char **argv);

/* --top N: a positive count of rows; -1 (error and hint naming what) when it is not. */
int top_opt(int *top, const char *arg, const char *what);

/*
 * --by KEY: split a command's figures by process, backend type, database, user or
 * statement. Bits, so that a command says which keys it takes.
 */
enum by { BY_NONE = 0, BY_PID = 1, BY_TYPE = 2, BY_DATABASE = 4, BY_USER = 8, BY_QUERY = 16 };
#define BY_LONGOPT { "by", required_argument, NULL, 'b' }
/*
 * Parses the value of --by into *by, one of the keys in allowed (BY_PID | BY_TYPE...);
 * -1 (error and a hint listing the allowed keys printed) for any other word.
 */
int by_opt(enum by *by, const char *arg, unsigned allowed);
/* The word for a key: "pid", "type", "database", "user", "query"; "" for BY_NONE. */
const char *by_name(enum by by);
/*
 * The part of a label a key groups by: type (for BY_TYPE, and BY_PID's name column),
 * database or user; "" where the process has none.
 */
struct pid_label;
const char *by_label(const struct pid_label *l, enum by by);
/* The breakdown array a key fills in JSON: "processes", "types", "databases", "users", "statements". */
const char *by_array(enum by by);

#endif
