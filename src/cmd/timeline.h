/* What dbtap profile --timeline and dbtap record share: the probes that feed a timeline, its output files and its JSON rows. */
#ifndef DBTAP_CMD_TIMELINE_H
#define DBTAP_CMD_TIMELINE_H

#include <stdbool.h>

#include "bpf/pgmark.h"
#include "bpf/waitspan.h"
#include "perf/event.h"
#include "profile/engine.h"
#include "profile/timeline.h"
#include "report/timeline.h"
#include "target/target.h"
#include "util/json.h"

/*
 * What a timeline is fed from: on-CPU samples (cpu-clock at hz), and for a cluster
 * its transactions, statements and checkpoints (pgmark) and its waits (waitspan).
 */
struct tl_src {
	long hz;
	struct perf_event_desc ev;
	struct prof_engine *e;
	struct pgmark_probe *pm;
	struct waitspan_probe *ws;
	uint64_t start_ns;       /* the run's time 0, CLOCK_MONOTONIC */
	double start_realtime_s; /* the same instant, wall clock */
	/*
	 * Transactions and statements read from the backends' PgBackendStatus at their
	 * switch-outs, by the waits' program; false: from the USDT probes, and why.
	 */
	bool switch_marks;
	char marks_why[160];
};

/* What the kernel dropped before the timeline saw it, summed over CPUs. */
struct tl_src_lost {
	uint64_t marks_ring_full, marks_threads_full, waits_ring_full, waits_threads_full;
};

/* -F HZ for both commands: 0, or -1 with the error and a hint printed. */
int tl_hz_opt(long *hz, const char *arg);
/*
 * Opens and attaches everything on t; tl names the waits of the cluster's version.
 * A cluster whose wait event cannot be found is traced without waits (a warning).
 * The transactions and statements are read at the switch-outs where the server's
 * PgBackendStatus layout is known, unless usdt (the probes, a trap each).
 * 0, or an exit status with the error printed; nothing stays attached then.
 */
int tl_src_open(struct tl_src *s, struct target *t, long hz, bool statements, bool usdt,
		struct timeline *tl);
/* Where the markers come from: "PgBackendStatus", "usdt", or NULL (no cluster). */
const char *tl_src_marks_from(const struct tl_src *s);
/* The run started at start_ns (the frame's clock): the wall clock of that instant. */
void tl_src_started(struct tl_src *s, uint64_t start_ns);
/* Everything the kernel handed over since the last call, into tl. */
void tl_src_poll(struct tl_src *s, struct timeline *tl);
/* Before a timeline is built up to t_ns: the waits in progress then. */
void tl_src_open_waits(struct tl_src *s, struct timeline *tl, uint64_t t_ns);
void tl_src_lost(struct tl_src *s, struct tl_src_lost *l);
void tl_src_free(struct tl_src *s);

enum tl_output { TL_OUT_NONE, TL_OUT_SVG, TL_OUT_GECKO_GZ, TL_OUT_GECKO };

/* What a file name asks for, by its suffix: .svg, .json.gz, .json. */
enum tl_output tl_output_kind(const char *path);
/* Writes m to path (beside it first, then renamed); 0, or -1 with the error printed. */
int tl_write_file(const struct tl_model *m, const char *path, int top, double start_realtime_s);
/* The "threads" array of a timeline JSON report: cells of samples and spans per row. */
void tl_json_rows(struct json *j, const struct tl_model *m, int top, int ncells);

#endif
