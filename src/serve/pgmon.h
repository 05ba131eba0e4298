/* One monitored PostgreSQL cluster: its probes, attached once, and what each scrape reads. */
#ifndef DBTAP_SERVE_PGMON_H
#define DBTAP_SERVE_PGMON_H

#include <stdbool.h>
#include <stdint.h>

#include "pg/cluster.h"
#include "serve/expo.h"

enum {
	COLLECT_TPS = 1,     /* transactions, aborts, transaction latency */
	COLLECT_LATENCY = 2, /* statement latency, top statements */
	COLLECT_WATCH = 4,   /* XID and OID consumption, wraparound horizon (poll mode) */
	COLLECT_WAIT = 8,    /* time per wait event (sched_switch: costs every switch of the host) */
	COLLECT_STAT = 16,   /* software counters per backend type, from /proc every second */
	COLLECT_DEFAULT = COLLECT_TPS | COLLECT_LATENCY | COLLECT_WATCH | COLLECT_STAT,
};

struct pgmon_opts {
	unsigned collect;
	int max_series;                  /* per label set: database/user/type, statements */
	const struct expo_buckets *buckets;
};

/* The metric families pgmon writes, in the order serve prints them. */
enum pgmon_family {
	PGF_UP,
	PGF_TRANSACTIONS,
	PGF_ABORTS,
	PGF_TXN_SECONDS,
	PGF_STMT_SECONDS,
	PGF_TOP_STMT,
	PGF_XIDS,
	PGF_OIDS,
	PGF_XID_UNTIL_STOP,
	PGF_XID_UNTIL_WRAP,
	PGF_XID_HORIZON,
	PGF_WAIT,
	PGF_CPU,
	PGF_RUNQ,
	PGF_FAULTS,
	PGF_CSW,
	PGF_PROBES,
	PGF_LOST,
	PGF_BPF_RUNS,
	PGF_BPF_SECONDS,
	PGF_NFAMILIES
};

struct pgmon;

/*
 * Attaches to cluster c (taken over: *c is emptied). NULL when nothing could be
 * attached, with the errors printed; a collector that fails alone is warned about
 * and left out.
 */
struct pgmon *pgmon_open(struct pg_cluster *c, const struct pgmon_opts *o);
/* The cluster label: "DATADIR:PORT". */
const char *pgmon_label(const struct pgmon *m);
pid_t pgmon_postmaster(const struct pgmon *m);
bool pgmon_alive(const struct pgmon *m);
/* Once a second: counters that must be read often (OID wrap, XID rate, exited backends). */
void pgmon_tick(struct pgmon *m);
/* Before a scrape: reads the maps. */
void pgmon_read(struct pgmon *m);
/* The family's HELP/TYPE (once per scrape, by the caller) and this cluster's samples. */
void pgmon_family_header(struct expo *e, enum pgmon_family f);
void pgmon_write(struct pgmon *m, struct expo *e, enum pgmon_family f);
void pgmon_close(struct pgmon *m);

#endif
