/* dbtap bench pgbench: pgbench TPS untraced and with dbtap's tracing commands attached. */
#include "bench/pgbench.h"
#include "util/error.h"

int pgbench_compare(const struct pgbench_opts *o)
{
	error("'bench pgbench' is not built yet");
	return EXIT_FAIL;
}
