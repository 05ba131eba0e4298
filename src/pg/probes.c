/* PostgreSQL's USDT probe names per major version. */
#include <stddef.h>

#include "pg/probes.h"

/*
 * 9.x through 18 name these probes the same way (src/backend/utils/probes.d); a
 * version that renames one gets its own row here.
 */
static const struct pg_probes probes_current = {
	.provider = "postgresql",
	.txn_start = "transaction__start",
	.txn_commit = "transaction__commit",
	.txn_abort = "transaction__abort",
	.query_start = "query__start",
	.query_done = "query__done",
	.ckpt_start = "checkpoint__start",
	.ckpt_done = "checkpoint__done",
};

const struct pg_probes *pg_probes_for(int major)
{
	if (major != 0 && major < 9)
		return NULL;
	return &probes_current;
}
