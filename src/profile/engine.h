/*
 * The sampling engine under dbtap profile (and the timeline and recorder built on it):
 * the BPF probe, the processes it has seen (their mappings read at first sight, their
 * labels), and the turning of kernel counts or single samples into named stacks.
 */
#ifndef DBTAP_PROFILE_ENGINE_H
#define DBTAP_PROFILE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/profile.h"
#include "report/stackset.h"
#include "target/symbolize.h"
#include "target/target.h"

/* What the root frame of each stack (and each text report section) is. */
enum prof_by {
	PROF_BY_NONE,   /* the process's command name */
	PROF_BY_PID,    /* "LABEL PID" */
	PROF_BY_TYPE,   /* the backend type (--pg), else the command name */
	PROF_BY_THREAD, /* "THREAD-NAME TID" */
};

/* Sample accounting over a set of counts. */
struct prof_stats {
	uint64_t samples;       /* counted in the maps */
	uint64_t lost;          /* lost in the kernel (maps full) */
	uint64_t lost_counts, lost_stacks;
	uint64_t ustack_err, kstack_err, ring_full, threads_full;
	uint64_t entry_fixed;   /* user stacks whose leaf was at a function's entry or ret */
	uint64_t truncated;     /* samples whose user or kernel stack hit PROFILE_MAX_DEPTH */
	uint64_t stack_missing; /* samples whose stack was not in the map any more */
};

struct prof_engine;

/*
 * Loads and attaches the probe (o->t is the target), reads the mappings of the
 * target's processes as they are now. 0, or an exit status with the error printed.
 */
int prof_engine_open(struct prof_engine **out, struct target *t, const struct profile_opts *o);
void prof_engine_free(struct prof_engine *e);
/*
 * Starts reading the kernel's symbols (with kernel stacks) on a thread of their own, so
 * that the report finds them read; called once everything is attached, off the path to
 * "tracing". Without it the first kernel frame named reads them: a recorder that never
 * captures never does.
 */
void prof_engine_preload_kernel(struct prof_engine *e);
/* Whether C++ names are demangled (the default) or left as the binaries have them. */
void prof_engine_demangle(struct prof_engine *e, bool on);
/*
 * Takes what the ring buffer holds: the mappings of newly sampled processes are read
 * now; with o->ring each sample goes to fn (may be NULL). Never blocks.
 */
int prof_engine_poll(struct prof_engine *e, void (*fn)(const struct profile_rec *r, void *arg),
		     void *arg);
/* Cumulative counts and statistics from the kernel. 0 or -1. */
int prof_engine_read(struct prof_engine *e, struct profile_counts *c);
/*
 * For a run of days: keeps copies of the user and kernel stacks under the hashes given
 * (the samples a recorder still holds), forgets every other one, and empties the
 * kernel's stack and count maps so that new stacks find room. The number of stacks the
 * kernel let go, or -1.
 */
int prof_engine_rotate(struct prof_engine *e, const uint64_t *ustacks, size_t nu,
		       const uint64_t *kstacks, size_t nk);
/* The kernel's statistics alone (samples taken, lost...), summed over CPUs. 0 or -1. */
int prof_engine_read_stats(struct prof_engine *e, __u64 stats[PROFILE_ST_MAX]);
/*
 * Adds count samples of one key to ss: root frame by `by`, then the user frames
 * outermost first, then the kernel frames; a truncated stack gets a "[truncated]"
 * frame below its outermost one. Updates st.
 */
int prof_engine_add(struct prof_engine *e, const struct profile_key *k, uint64_t count,
		    enum prof_by by, struct stack_set *ss, struct prof_stats *st);
/*
 * The frames of one key (root first, as prof_engine_add adds them) with their names
 * interned in ss; *frames is valid until the next call. Returns how many, -1 when out
 * of memory. flags: PROF_TRUNCATED, PROF_MISSING. For single samples (a timeline).
 */
#define PROF_TRUNCATED 1u
#define PROF_MISSING   2u
int prof_engine_frames(struct prof_engine *e, const struct profile_key *k, enum prof_by by,
		       struct stack_set *ss, const uint32_t **frames, unsigned *flags);
/*
 * How many frames at the end of the latest prof_engine_frames() came from the kernel
 * stack: a thread in the kernel when sampled (an interrupt, a softirq run on its
 * time, the way back from being preempted) has its user chain, then those.
 */
int prof_engine_kernel_frames(const struct prof_engine *e);
/* Fills the kernel-side fields of st from the statistics in c. */
void prof_engine_stats(const struct profile_counts *c, struct prof_stats *st);
/* The group label of a (pid, tid) for `by`, valid until the next call. */
const char *prof_engine_group(struct prof_engine *e, uint32_t pid, uint32_t tid, enum prof_by by);
/* The process of thread tid, as the kernel kept it (tid itself when unknown). */
uint32_t prof_engine_thread_pid(struct prof_engine *e, uint32_t tid);
/* The process label alone: backend type, or command name. */
const char *prof_engine_label(struct prof_engine *e, uint32_t pid);
/* File-backed modules seen in frames, with their frame-pointer share. */
int prof_engine_modules(struct prof_engine *e, const struct sym_module **out);
/* Processes whose mappings were read (seen alive). */
int prof_engine_nprocs(const struct prof_engine *e);
struct symbolizer *prof_engine_symbolizer(struct prof_engine *e);

#endif
