/* What a command traces: --pg TARGET, -p PID[,PID] or -t TID, resolved once. */
#ifndef DBTAP_TARGET_TARGET_H
#define DBTAP_TARGET_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "pg/cluster.h"

enum target_kind { TARGET_NONE, TARGET_PG, TARGET_PIDS, TARGET_TID };

/* Filled by option parsing: the raw words. */
struct target_opts {
	bool pg_set;
	const char *pg;   /* may be NULL with pg_set: "the only cluster" */
	const char *pids; /* "123,456" */
	const char *tid;
};

/*
 * The target options as the user gave them, for a hint that repeats the command line:
 * " --pg=DATADIR", " --pg", " -p 12,34", " -t 56", or "" when none was given.
 */
const char *target_opts_spell(const struct target_opts *o, char *buf, size_t len);

struct target {
	enum target_kind kind;
	struct pg_cluster pg; /* TARGET_PG */
	pid_t *pids;          /* TARGET_PIDS: processes (tgids); TARGET_TID: the thread's tgid */
	int npids;
	pid_t tid;            /* TARGET_TID */
	char *binary;         /* /proc/PID/exe of the (first) target process */
};

/* Long option for --pg: optional argument, so "--pg" alone works (getopt_long). */
#define TARGET_LONGOPTS { "pg", optional_argument, NULL, 'P' }
/*
 * Handles 'P', 'p', 't' inside a getopt_long loop (reads optarg, may advance optind);
 * returns true when consumed. "--pg=X" and "--pg X" both work: a bare --pg takes the
 * next word when it looks like a target (a path, a number, a directory), so
 * "--pg xid" still leaves "xid" to the command.
 */
bool target_opt(struct target_opts *o, int opt, int argc, char **argv);

/*
 * The syntax of -p PID[,PID]: positive decimal pids, no empty item. *pids is malloc'd.
 * 0, or EXIT_USAGE with an error naming the list and a hint. Looks at no process.
 */
int target_pid_list_parse(const char *list, pid_t **pids, int *npids);

/*
 * Resolves the options into processes. require: a target is mandatory. Prints the
 * error and hint itself; returns 0, EXIT_USAGE or EXIT_FAIL. With no option and not
 * required, kind is TARGET_NONE.
 */
int target_resolve(struct target *t, const struct target_opts *o, bool require);
void target_free(struct target *t);
/* Whether the target still runs: the postmaster, any of the pids, the thread. */
bool target_alive(const struct target *t);
/* Whether pid (a tgid) belongs to the target now (a child of the postmaster for --pg). */
bool target_has_pid(const struct target *t, pid_t pid);
/* Backend type for --pg targets ("client backend"), "" otherwise. Refreshes as needed. */
const char *target_proc_type(struct target *t, pid_t pid);
/* Human description: "cluster 15 at /var/lib/... (pid 123)", "pid 123,456". */
const char *target_describe(const struct target *t);

#endif
