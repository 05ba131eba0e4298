/* PostgreSQL's USDT probes (provider "postgresql") per major version, and query-text normalization. */
#ifndef DBTAP_PG_PROBES_H
#define DBTAP_PG_PROBES_H

#include <stdbool.h>
#include <stddef.h>

/* The probes tps, latency query and stat use. Names as in the binary's notes. */
struct pg_probes {
	const char *provider;    /* "postgresql" */
	const char *txn_start;   /* transaction__start(LocalTransactionId) */
	const char *txn_commit;  /* transaction__commit(LocalTransactionId) */
	const char *txn_abort;   /* transaction__abort(LocalTransactionId) */
	const char *query_start; /* query__start(const char *): simple protocol only */
	const char *query_done;  /* query__done(const char *): not fired when it errors */
	const char *ckpt_start;  /* checkpoint__start(int flags): in the checkpointer */
	const char *ckpt_done;   /* checkpoint__done(int, int, int, int, int) */
};

/*
 * Probe names for a major version (12..18 known; 0 = unknown version, assume the
 * current names). NULL for versions older than the table, with nothing printed.
 */
const struct pg_probes *pg_probes_for(int major);

/*
 * Normalizes SQL text the way pg_stat_statements shows it: string literals (also
 * E'', B'', X'', N'', U&'' and dollar-quoted), numbers and negative numbers (a '-'
 * after an operator, '(' or a keyword) become $1, $2, ... in order, numbered after
 * the highest $n already present; comments and runs of white space collapse to one
 * space; identifiers, keywords, quoted identifiers, true/false/null and existing $n
 * are kept. Writes at most len bytes (always NUL-terminated, never cutting a UTF-8
 * character) and returns the length the full result has. Safe on truncated input:
 * an unterminated literal becomes one parameter. Used by latency query and stat.
 */
size_t pg_normalize_query(const char *sql, char *out, size_t len);

#endif
