/* Labels for traced processes: the one rule every command uses (see label.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/cluster.h"
#include "target/label.h"
#include "target/proc.h"

static bool from_title(const char *title, struct pid_label *out)
{
	struct pg_title pt;

	if (!title || !title[0] || pg_title_parse_full(title, &pt))
		return false;
	snprintf(out->type, sizeof(out->type), "%s", pt.type);
	snprintf(out->user, sizeof(out->user), "%s", pt.user);
	snprintf(out->database, sizeof(out->database), "%s", pt.database);
	return true;
}

/* argv[0]'s base name, what ps shows for a program that keeps its argv. */
static void from_argv0(const char *title, struct pid_label *out)
{
	size_t n = strcspn(title, " ");
	const char *base = title;

	for (const char *p = title; p < title + n; p++)
		if (*p == '/')
			base = p + 1;
	snprintf(out->type, sizeof(out->type), "%.*s", (int)(title + n - base), base);
}

bool target_label(struct target *t, pid_t pid, const char *raw, size_t raw_len,
		  struct pid_label *out)
{
	char title[256] = "";

	if (raw) {
		size_t n = strnlen(raw, raw_len);
		if (n >= sizeof(title))
			n = sizeof(title) - 1;
		memcpy(title, raw, n);
		title[n] = '\0';
	}
	memset(out, 0, sizeof(*out));
	if (t && t->kind == TARGET_PG && pid == t->pg.postmaster) {
		snprintf(out->type, sizeof(out->type), "postmaster");
		return true;
	}
	if (from_title(title, out))
		return true;
	if (t && t->kind == TARGET_PG) {
		const char *type = pg_cluster_proc_type(&t->pg, pid);
		if (type[0] && strcmp(type, "unknown")) {
			snprintf(out->type, sizeof(out->type), "%s", type);
			for (int i = 0; i < t->pg.nprocs; i++) {
				if (t->pg.procs[i].pid != pid)
					continue;
				snprintf(out->user, sizeof(out->user), "%s", t->pg.procs[i].user);
				snprintf(out->database, sizeof(out->database), "%s",
					 t->pg.procs[i].database);
			}
			return true;
		}
		if (proc_exists(pid)) {
			snprintf(out->type, sizeof(out->type), "unknown");
			return false;
		}
	} else {
		char *live = proc_title(pid);
		bool pg = from_title(live, out);
		free(live);
		if (pg)
			return true;
	}
	if (proc_comm(pid, out->type, sizeof(out->type)) == 0)
		return false; /* it runs: a PostgreSQL title may still come */
	if (title[0]) {
		from_argv0(title, out);
		if (out->type[0])
			return true;
	}
	snprintf(out->type, sizeof(out->type), "exited");
	return false;
}
