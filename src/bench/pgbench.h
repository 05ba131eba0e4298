/* dbtap bench pgbench: pgbench TPS untraced and with dbtap's own tracing commands attached. */
#ifndef DBTAP_BENCH_PGBENCH_H
#define DBTAP_BENCH_PGBENCH_H

#include <stdbool.h>

struct pgbench_opts {
	bool pg_set;
	const char *pg; /* --pg TARGET, NULL: the only cluster */
	double duration; /* seconds per pgbench run */
	int clients;
	int repeats;     /* runs per tracer, interleaved */
};

/* Runs the comparison and prints it; an exit status. */
int pgbench_compare(const struct pgbench_opts *o);

#endif
