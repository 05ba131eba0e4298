/* dbtap bench's engine: the mechanisms, one timed run of each, and the figures over repeats. */
#ifndef DBTAP_BENCH_RUN_H
#define DBTAP_BENCH_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/workload.h"

enum bench_attach {
	ATTACH_NONE,       /* the site runs unprobed */
	ATTACH_UPROBE,
	ATTACH_URETPROBE,
	ATTACH_USDT,
	ATTACH_WATCHPOINT, /* a write breakpoint on bench_watched, per thread */
};

/* Who handles a hit. */
enum bench_prog {
	PROG_NONE,     /* nothing (baseline, syscall), or the perf event counting alone */
	PROG_HANDLER,  /* dbtap's counting handler */
	PROG_EMPTY,    /* an empty BPF program: the floor */
	PROG_BPFTRACE, /* bpftrace's @c = count() on the same site */
};

struct bench_mech {
	const char *name;
	enum bench_site site;
	enum bench_attach attach;
	const char *what;
};

extern const struct bench_mech bench_mechs[];
extern const int bench_nmechs;
const struct bench_mech *bench_mech_find(const char *name);
const char *bench_prog_name(enum bench_prog p);

/* What every run shares. */
struct bench_env {
	char *exe;                  /* /proc/DBTAP_PID/exe: the sites' file, the running inode */
	char *exe_path;             /* its path (for bpftrace and messages), NULL if unknown */
	uint64_t offset[SITE_MAX];  /* file offsets of the sites (uprobes) */
	struct bench_bpf *bpf;
	char *bpftrace;             /* path, with --vs-bpftrace */
	enum bench_workload workload;
	int threads;
	double duration_s;
};

/* Resolves the sites in dbtap's binary and loads the BPF programs. 0 or -1 (printed). */
int bench_env_init(struct bench_env *e, enum bench_workload w, int threads, double duration_s);
void bench_env_free(struct bench_env *e);

/* One timed run. */
struct bench_sample {
	uint64_t iterations; /* the workload's own count */
	uint64_t count;      /* what the probe counted, when counted */
	bool counted;
	/*
	 * Calls per second of the threads' CPU time (summed over threads): what a
	 * thread with a CPU to itself reaches, however busy the machine is.
	 */
	double rate;
	double wall_rate;    /* calls per wall-clock second, all threads */
	double ns;           /* CPU nanoseconds per call, per thread */
	/* A statistics run (bench_run with stats): the kernel's view of the program. */
	bool prog_stats;
	uint64_t prog_runs;  /* times the BPF program ran */
	uint64_t prog_ns;    /* its total run time */
};

enum { BENCH_OK = 0, BENCH_UNAVAILABLE = 1, BENCH_FAILED = -1, BENCH_INTERRUPTED = -2 };

/*
 * Starts the workload, attaches m with program p, lets it run duration_s, stops it
 * and detaches everything (on every path). BENCH_UNAVAILABLE with the reason when
 * the kernel or bpftrace cannot attach it; BENCH_INTERRUPTED on Ctrl-C.
 */
int bench_run(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
	      struct bench_sample *s, char *reason, size_t rlen);
/*
 * The same with BPF run-time statistics on (handler and empty programs only): how long
 * the program itself runs per hit, and how often it ran, which must equal the
 * workload's calls (the empty program counts nothing else). Its timing is not used.
 */
int bench_run_stats(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
		    struct bench_sample *s, char *reason, size_t rlen);

#define BENCH_STATS_RUNS 5

/* A table row: one mechanism with one program, over the repeats. */
struct bench_row {
	const struct bench_mech *mech;
	enum bench_prog prog;
	bool available;
	char reason[256];
	int n;                  /* samples taken */
	struct bench_sample *samples;
	/* bench_row_finish: */
	double ns_median, ns_spread_pct, rate_median, wall_rate_median;
	uint64_t iterations, count; /* sums over the samples */
	bool counted, verified;
	/*
	 * The statistics runs (up to BENCH_STATS_RUNS, interleaved like the repeats):
	 * iterations, prog_runs and prog_ns summed in stats, each run's program time per
	 * hit in prog_per_hit, their median in prog_ns_median.
	 */
	struct bench_sample stats;
	double prog_per_hit[BENCH_STATS_RUNS];
	int nstats;
	double prog_ns_median;
	bool stats_verified;        /* stats.prog_runs == stats.iterations */
};

/* An available row with room for repeats samples; bench_row_free releases it. */
void bench_row_init(struct bench_row *r, const struct bench_mech *m, enum bench_prog p,
		    int repeats);
void bench_row_free(struct bench_row *r);

/*
 * Runs every available row repeats times, interleaved (the rows of one repeat one
 * after the other, in reverse order every other repeat, so that drift of the machine
 * hits every row alike and neither of two neighbours always goes first); a row the
 * kernel cannot attach becomes unavailable with its reason. Then short runs of the BPF
 * rows with the kernel's run-time statistics on (as many as the repeats, at most
 * BENCH_STATS_RUNS). Before each run, a progress line on stderr ("# uprobe-push
 * handler: repeat 2/5"). Finishes every row. 0, or -1
 * on a run-time failure (printed); *interrupted on Ctrl-C (the rows keep what ran).
 */
int bench_measure(struct bench_env *e, struct bench_row *rows, int nrows, int repeats,
		  bool *interrupted);

/* Median and spread ((max - min) / median, in %) of the samples' ns and rates. */
void bench_row_finish(struct bench_row *r);
double bench_median(double *v, int n);

/* The measured row of that mechanism and program, or NULL. */
const struct bench_row *bench_rows_find(const struct bench_row *rows, int n, const char *mech,
					enum bench_prog p);
/*
 * Ratios from paired samples: the median over repeats of sample i of r against sample
 * i of the other row, so drift between repeats cancels out. NaN when not applicable.
 * vs_empty_pct: a handler row over its empty row, in %; vs_bpftrace: a handler row
 * over its bpftrace row (only when bpftrace's count was right); loss_pct: the math
 * loop's throughput lost against the baseline, in %.
 */
double bench_row_vs_empty_pct(const struct bench_row *rows, int n, const struct bench_row *r);
double bench_row_vs_bpftrace(const struct bench_row *rows, int n, const struct bench_row *r);
double bench_row_loss_pct(const struct bench_row *r, const struct bench_row *base);
/* The program's own run time per hit from the statistics run; NaN without one. */
double bench_row_prog_ns(const struct bench_row *r);
/*
 * Handler rows: what the handler's own work adds to a hit, in % of a hit with the
 * empty program: (handler prog ns - empty prog ns) / empty ns per event. Kernel
 * statistics, which machine noise does not reach: the precise form of the target.
 */
double bench_row_handler_added_pct(const struct bench_row *rows, int n,
				   const struct bench_row *r);

#endif
