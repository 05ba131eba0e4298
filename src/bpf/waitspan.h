/* Structs shared by waitspan.bpf.c and waitspan.c: each wait of a backend as a timed span, for the timeline and the recorder. */
#ifndef DBTAP_BPF_WAITSPAN_H
#define DBTAP_BPF_WAITSPAN_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define WAITSPAN_MAX_THREADS 16384

/* A thread that left the CPU in a wait, until it runs again. */
struct waitspan_thread {
	__u64 t0_ns;  /* when this off-CPU stretch began */
	__u32 tgid;
	__u32 event;  /* wait_event_info read as it left the CPU */
	__u32 cont;   /* the stretch before ended at the last switch-in, in the same wait */
	__u32 off;    /* 1: off CPU now; 0: back on CPU after the wait */
};

#define WAITSPAN_CONT 1u /* this stretch continues the one before: the same wait, resumed */

/*
 * One ring buffer record: one off-CPU stretch in a wait, emitted when the thread runs
 * again. A wait the server resumes without changing its event (a lock wait waking for
 * the deadlock check, a latch set for something else) is several stretches; the later
 * ones carry WAITSPAN_CONT, and the reader joins them into one span.
 */
struct waitspan_rec {
	__u32 pid, tid;
	__u32 event;
	__u32 flags;
	__u64 t0_ns, t1_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

/* Counters per CPU, cumulative. */
enum waitspan_stat {
	WAITSPAN_ST_SPANS,        /* records written */
	WAITSPAN_ST_RING_FULL,    /* records dropped: the ring buffer was full */
	WAITSPAN_ST_THREADS_FULL, /* waits not followed: the thread map was full */
	WAITSPAN_ST_MAX,
};

#endif

#ifndef __bpf__
#ifndef DBTAP_BPF_WAITSPAN_USER_H
#define DBTAP_BPF_WAITSPAN_USER_H
#include <stdint.h>

#include "bpf/pgmark.h"
#include "target/target.h"

struct waitspan_probe_opts {
	const struct target *target;
	uint64_t ptr_addr;   /* run-time address of my_wait_event_info (or MyProc) */
	uint32_t field_off;  /* offset of the u32 behind that pointer */
	uint32_t idle_event; /* Client:ClientRead, the wait for the next command: not a span */
	uint32_t idle_class; /* the class byte of idle main loops (Activity): not spans; 0 none */
	/* the transactions and statements read at the same switch-outs; NULL: not here */
	const struct pgmark_switch_opts *marks;
};

struct waitspan_probe;

/* Opens, loads and attaches at sched_switch; 0, or an exit status with the error printed. */
int waitspan_probe_open(struct waitspan_probe **out, const struct waitspan_probe_opts *o);
/* Hands every record waiting to fn without blocking; the number of records, -1 on error. */
int waitspan_probe_consume(struct waitspan_probe *p,
			   void (*fn)(const struct waitspan_rec *r, void *arg), void *arg);
/*
 * The waits in progress: each thread off CPU in a wait now, as a record ending at
 * now_ns (flags as if it ended then). The number handed to fn, -1 on error.
 */
int waitspan_probe_open_waits(struct waitspan_probe *p, uint64_t now_ns,
			      void (*fn)(const struct waitspan_rec *r, void *arg), void *arg);
/* What the kernel counted since the start, summed over CPUs. */
int waitspan_probe_stats(struct waitspan_probe *p, uint64_t st[WAITSPAN_ST_MAX]);
void waitspan_probe_destroy(struct waitspan_probe *p);
#endif
#endif
