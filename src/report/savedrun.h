/* stat's figures in JSON: the keys stat -j writes, and a saved run read back for --compare FILE. */
#ifndef DBTAP_REPORT_SAVEDRUN_H
#define DBTAP_REPORT_SAVEDRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/jsonread.h"
#include "report/stmt.h"
#include "util/json.h"

/* What a saved run measured: its summary holds "events", "statements" or "transactions". */
enum savedrun_kind { SAVEDRUN_COUNTING, SAVEDRUN_QUERY, SAVEDRUN_TRANSACTION };

#define SAVEDRUN_MAX (16u << 20) /* bytes: a saved run is read whole */

/* The unit of a figure, which names its keys (docs/json.md: Units). */
enum savedrun_unit {
	SAVEDRUN_COUNT, /* events: "total", "mean_per_call", ... */
	SAVEDRUN_NS,    /* CPU time (the clock events): "total_ns", "mean_ns", ... */
	SAVEDRUN_US,    /* a latency measured in ns (wall time): "total_us", "mean_us", ... */
};

/* One event of a counting report: scaled value, share of time counted, or why not. */
struct savedrun_count {
	bool counted;
	double value;      /* in the event's unit: ns for the clocks */
	double pct;        /* running_pct */
	const char *reason; /* when not counted */
};

/*
 * Writers: `"NAME": {"counted", "value" or "value_ns", "per_s", "running_pct"}` (per_s
 * only for counts: a clock's rate is the cpus_utilized metric), or with "reason".
 */
void savedrun_write_count(struct json *j, const char *name, bool clock,
			  const struct savedrun_count *v, double seconds);
/* `"KEY": {"counted", "total*", "mean*", "p50*", "p99*", "max*", "calls_counted"}`. */
void savedrun_write_fig(struct json *j, const char *key, enum savedrun_unit u,
			const struct stmt_fig *s, const char *reason);

/* A saved run: its summary line, checked (types and ranges) before anything is used. */
struct savedrun {
	struct jv *summary;
	enum savedrun_kind kind;
	const char *target;      /* as saved, or "?" */
	double duration_s;       /* > 0 */
	const struct jv *events; /* counting */
	const struct jv *rows;   /* per statement: the "statements" or "transactions" array */
};

/* "counting", "--by query", "--by transaction": the kind in messages. */
const char *savedrun_kind_name(enum savedrun_kind k);
/*
 * Parses text (len bytes, NUL-terminated, modified), the NDJSON that `dbtap -j stat`
 * printed, named name in messages: every line must be JSON; the last "summary" line
 * must be of kind want and hold only figures of the right type and range. 0, or
 * EXIT_USAGE with the error (the line and key) and a hint printed.
 */
int savedrun_parse(struct savedrun *sr, const char *name, char *text, size_t len,
		   enum savedrun_kind want);
/* savedrun_parse() of a file: a regular text file of at most SAVEDRUN_MAX bytes. */
int savedrun_load(struct savedrun *sr, const char *path, enum savedrun_kind want);
void savedrun_free(struct savedrun *sr);

/* Counting: event name as saved, read as its unit says; "not in the saved run" if absent. */
void savedrun_count(const struct savedrun *sr, const char *name, bool clock,
		    struct savedrun_count *out);

/* Per statement: row i of the saved run. */
struct savedrun_row {
	const char *text;            /* "query" or "outcome" */
	uint64_t calls, multi_cpu;
	uint64_t cpus;               /* bit per CPU id below 64 */
	const struct jv *o;          /* the row, for savedrun_row_fig() */
};
int savedrun_nrows(const struct savedrun *sr);
void savedrun_row(const struct savedrun *sr, int i, struct savedrun_row *out);
/*
 * A figure of a row: event (in "events") when is_event, else a key of the row
 * ("wall", "context_switches", "cpu_migrations"). Not ok when not counted; *reason
 * then says why ("not in the saved run" when it is absent).
 */
void savedrun_row_fig(const struct savedrun_row *r, const char *name, bool is_event,
		      enum savedrun_unit u, struct stmt_fig *s, const char **reason);

#endif
