/* What the files of dbtap stat share: its options, the sides it measures, its two reports. */
#ifndef DBTAP_CMD_STAT_H
#define DBTAP_CMD_STAT_H

#include <stdbool.h>

#include "bpf/stat.h"
#include "cmd/frame.h"
#include "perf/counter.h"
#include "perf/event.h"
#include "report/savedrun.h"
#include "report/stmt.h"
#include "target/target.h"
#include "util/strbuf.h"

/* --by: what the figures are split by. tid and transaction are stat's own keys. */
enum stat_by { SB_NONE, SB_PID, SB_TID, SB_TYPE, SB_DATABASE, SB_USER, SB_QUERY, SB_TRANSACTION,
	       SB_NR };
/* Per key: the word after --by, the JSON array it fills, the text table's column. */
struct stat_by_key {
	const char *name, *array, *column;
};
extern const struct stat_by_key stat_by_keys[SB_NR];

static inline bool stat_by_stmt(enum stat_by by)
{
	return by == SB_QUERY || by == SB_TRANSACTION;
}

/* --sort: statements by their total wall time (default), mean, p99, calls, or an event. */
enum { SORT_WALL = -1, SORT_MEAN = -2, SORT_P99 = -3, SORT_CALLS = -4 };

/* A measured side: the target and its counters or its per-statement probe. */
struct side {
	struct savedrun saved;     /* --compare FILE: nothing is measured */
	bool is_saved;
	struct target t;
	char *desc;
	struct counter_set cs;
	bool cs_init;
	struct stat_probe *probe;
	struct stmt_table prev; /* per statement: the previous report's table, for intervals */
};

struct stat_cmd {
	struct frame f;
	struct perf_event_desc *evs;
	int nev;
	enum stat_by by;
	const char *compare;
	int top;
	int sort; /* SORT_* or an event's index: what --top keeps the largest of */
	const char *sort_arg;
	struct strbuf events;
	struct side *sides;
	int nsides;
	bool usdt; /* --usdt: statements from the USDT probes, where PgBackendStatus could be read */
	bool self_time; /* DBTAP_STAT_SELF_TIME: the kernel side's parts timed, on stderr at the end */
};

/* Why event ev is not counted: its open errno err as perf says it, or never scheduled. */
const char *stat_reason(const struct perf_event_desc *ev, int err);

/* Counting modes (no --by, --by pid|tid|type|database|user): one report (statcount.c). */
void stat_report_counters(struct stat_cmd *c, const struct frame_report *r);

/* --by query|transaction: one report of the statements (statstmt.c). */
void stat_report_statements(struct stat_cmd *c, const struct frame_report *r);
/* --sort KEY into c->sort: wall, mean, p99, calls or an -e event. 0, or -1 (error printed). */
int stat_parse_sort(const char *arg, struct stat_cmd *c);

#endif
