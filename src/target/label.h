/* What a traced process is, one rule for every command's breakdowns. */
#ifndef DBTAP_TARGET_LABEL_H
#define DBTAP_TARGET_LABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "target/target.h"

struct pid_label {
	char type[64];     /* backend type, "postmaster", a command name, or "exited" */
	char user[64];     /* "" where none applies */
	char database[64];
};

/*
 * Labels pid, trying in turn:
 *  - the target cluster's postmaster: "postmaster";
 *  - title, the process title the kernel copied at the process's first event (NULL
 *    or "" when none; read up to title_len bytes, a NUL not required, since it comes
 *    from the traced process): a PostgreSQL title gives type, user and database, and
 *    this survives the process's exit;
 *  - for --pg, the cluster's process list (refreshed when pid is a new child), or
 *    "unknown" for a live process whose title says nothing yet;
 *  - the live title in /proc: a PostgreSQL process traced with -p or -t;
 *  - the command name (/proc/PID/comm), or argv[0]'s base name from the kept title;
 *  - "exited".
 * Returns true when the label is final; false when it is "exited" or only a command
 * name while the process may still show a better title (a caller may ask again later).
 */
bool target_label(struct target *t, pid_t pid, const char *title, size_t title_len,
		  struct pid_label *out);

#endif
