/* The per-statement table of stat --per query|transaction: normalized rows, deltas, figures. */
#ifndef DBTAP_REPORT_STMT_H
#define DBTAP_REPORT_STMT_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/stat.h"
#include "report/sparsehist.h"
#include "util/hashmap.h"

/* A statement after normalization (or a transaction outcome): what a report shows. */
struct stmt_row {
	char *text;
	struct stat_agg agg;
	struct sparse_hist h[STAT_FIGS];
};

/* Rows in insertion order, found by text through a hash table. */
struct stmt_table {
	struct stmt_row *v;
	int n, cap;
	struct hashmap by_text; /* text -> index in v */
};

void stmt_table_free(struct stmt_table *t);
const struct stmt_row *stmt_table_find(const struct stmt_table *t, const char *text);
/* text's row, added empty when new. NULL when out of memory. */
struct stmt_row *stmt_table_get(struct stmt_table *t, const char *text);

/*
 * The kernel's statements as rows: per_query normalizes each sampled text
 * (pg_normalize_query) and merges the statements it makes equal; otherwise the keys
 * are the outcomes "commit" and "abort". 0, or -1 when out of memory.
 */
int stmt_table_from_snapshot(const struct stat_snapshot *snap, bool per_query,
			     struct stmt_table *out);
/*
 * out = now - before, row by row, for interval reports: rows whose calls did not
 * change are left out. 0 or -1.
 */
int stmt_table_delta(const struct stmt_table *now, const struct stmt_table *before,
		     struct stmt_table *out);

/* One figure of a statement: the exact mean (from the sum) and log-linear percentiles. */
struct stmt_fig {
	bool ok;
	uint64_t sum, p50, p99, max;
	double mean;
	uint64_t n; /* calls it was measured in */
};

/*
 * Figure fig of row r. slot is the counter slot whose multiplexed-out calls are left
 * out of n (the calls where that counter never ran), or -1. fig < 0: not measured.
 */
void stmt_row_fig(const struct stmt_row *r, int fig, int slot, struct stmt_fig *s);

#endif
