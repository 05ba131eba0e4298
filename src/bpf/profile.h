/* Structs shared by profile.bpf.c and profile.c: on-CPU stacks counted per thread in the kernel. */
#ifndef DBTAP_BPF_PROFILE_H
#define DBTAP_BPF_PROFILE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* kernel.perf_event_max_stack's default: deeper stacks are cut and marked truncated. */
#define PROFILE_MAX_DEPTH 127
#define PROFILE_COMM_LEN  16

/* A stack is stored once, under a 64-bit hash of its addresses; 0 means "no stack". */
#define PROFILE_STACK_TRUNCATED 1u /* the unwinder stopped at PROFILE_MAX_DEPTH frames */

struct profile_stack {
	__u32 len;                     /* frames in ip[], leaf first */
	__u32 flags;                   /* PROFILE_STACK_* */
	__u64 ip[PROFILE_MAX_DEPTH];
};

/* What samples are counted by, in the kernel. */
struct profile_key {
	__u32 pid;    /* tgid */
	__u32 tid;
	__u64 ustack; /* hash of the user stack, 0: none (a kernel thread, --kernel) */
	__u64 kstack; /* hash of the kernel stack, 0: none (user mode, --user) */
};

/* A thread's name and process, kept at its first sample: it may exit before the end. */
struct profile_thread {
	__u32 pid;
	__u32 pad;
	char comm[PROFILE_COMM_LEN];
};

/* Ring buffer records. */
enum profile_rec_kind {
	PROFILE_REC_PROC = 1,   /* a process sampled for the first time: read its maps now */
	PROFILE_REC_SAMPLE = 2, /* one sample with its time (only when asked for) */
};

struct profile_rec {
	__u32 kind;
	__u32 cpu;
	__u32 pid;
	__u32 tid;
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 ustack;
	__u64 kstack;
};

/* What the program could not do, counted per CPU and reported. */
enum profile_stat {
	PROFILE_ST_SAMPLES,      /* samples of the target (counted or lost) */
	PROFILE_ST_COUNTS_FULL,  /* lost: the counts map was full */
	PROFILE_ST_STACKS_FULL,  /* lost: the stack map was full */
	PROFILE_ST_USTACK_ERR,   /* kept without a user stack: the unwinder failed */
	PROFILE_ST_KSTACK_ERR,   /* kept without a kernel stack: the unwinder failed */
	PROFILE_ST_RING_FULL,    /* ring buffer records dropped (samples or process notes) */
	PROFILE_ST_THREADS_FULL, /* threads whose name could not be kept */
	PROFILE_ST_ENTRY_FIXED,  /* user stacks at a function's entry or ret, caller put back */
	PROFILE_ST_MAX,
};

#endif

#if !defined(__bpf__) && !defined(DBTAP_BPF_PROFILE_USER_H)
#define DBTAP_BPF_PROFILE_USER_H
#include <stdbool.h>

#include "perf/event.h"
#include "target/target.h"

/* What to sample on, and how much to keep. */
struct profile_opts {
	const struct target *t;             /* TARGET_NONE: every process (-a) */
	const struct perf_event_desc *ev;   /* the sampling event; NULL with tracepoint */
	const char *tracepoint;             /* raw tracepoint name ("page_fault_user") */
	bool user, kernel;                  /* which stacks to take */
	bool ring;                          /* stream every sample with its time */
	unsigned max_keys;                  /* distinct (thread, stack) pairs; 0: default */
	unsigned max_stacks;                /* distinct user stacks (kernel: half); 0: default */
};

/* Counts read from the maps: cumulative since the start. */
struct profile_counts {
	struct profile_key *keys;
	__u64 *counts;
	int n;
	__u64 stats[PROFILE_ST_MAX]; /* summed over CPUs */
};

struct profile_probe;

/*
 * Loads profile.bpf.c for the target and attaches it to the event on every CPU (or to
 * the raw tracepoint). 0, or an exit status with the error and a hint printed; nothing
 * stays open on failure.
 */
int profile_probe_open(struct profile_probe **out, const struct profile_opts *o);
/*
 * Hands every ring buffer record waiting (new processes; samples with o->ring) to fn,
 * without blocking. Returns the number of records, -1 on error.
 */
int profile_probe_consume(struct profile_probe *p,
			  void (*fn)(const struct profile_rec *r, void *arg), void *arg);
/* Reads the counts map and the statistics. 0 or -1. */
int profile_probe_read(struct profile_probe *p, struct profile_counts *c);
/*
 * Empties the stack maps and the counts (the recorder, which runs for days, keeps its
 * own copies of the stacks it still needs first). The number of stacks deleted, or -1.
 */
int profile_probe_clear_stacks(struct profile_probe *p);
/* The statistics alone (summed over CPUs), without reading the counts: cheap each second. */
int profile_probe_stats(struct profile_probe *p, __u64 stats[PROFILE_ST_MAX]);
void profile_counts_free(struct profile_counts *c);
/* The user (or kernel) stack stored under hash; 0, or -1 when it is not there. */
int profile_probe_stack(struct profile_probe *p, bool kernel, __u64 hash, struct profile_stack *s);
/* The name and process the program kept for thread tid; 0 or -1. */
int profile_probe_thread(struct profile_probe *p, __u32 tid, struct profile_thread *t);
void profile_probe_destroy(struct profile_probe *p);
#endif
