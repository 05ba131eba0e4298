/* Structures shared by wait.bpf.c and its user side: per-thread state, time per wait. */
#ifndef DBTAP_BPF_WAIT_H
#define DBTAP_BPF_WAIT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define WAIT_TEXT_LEN  256   /* a power of two: the hash loop masks its index with it */
#define WAIT_MAX_AGGS  65536 /* (process, statement, wait) keys; more are counted in drops */
#define WAIT_MAX_TEXTS 10000
#define WAIT_MAX_THREADS 16384

/* Cookies of the probes without arguments (wait.bpf.c on_event). */
enum { WAIT_EV_QUERY_DONE = 1, WAIT_EV_TXN_START, WAIT_EV_TXN_COMMIT, WAIT_EV_TXN_ABORT };

/*
 * What a stretch of a backend's time was. Off CPU, the wait event read as the thread
 * left the CPU decides; with none set, the thread was either still runnable (taken off
 * by the scheduler) or asleep for something PostgreSQL does not label.
 */
enum wait_kind {
	WAIT_KIND_CPU = 0,        /* on CPU */
	WAIT_KIND_WAIT = 1,       /* off CPU with a wait event set */
	WAIT_KIND_IDLE = 2,       /* Client:ClientRead outside a transaction */
	WAIT_KIND_RUNNABLE = 3,   /* off CPU, no wait event, preempted: waiting for a CPU */
	WAIT_KIND_UNLABELLED = 4, /* off CPU, no wait event, asleep */
	WAIT_KIND_UNREADABLE = 5, /* off CPU, the wait event word could not be read */
	WAIT_NKINDS
};

/* One (process, statement, wait) in the kernel's aggregate map. */
struct wait_key {
	__u64 stmt;   /* statement hash (stathash.h), 0 outside a statement */
	__u32 tgid;
	__u32 event;  /* wait_event_info, 0 for the kinds without one */
	__u32 kind;   /* enum wait_kind */
	__u32 stack;  /* --stacks: kernel stack id + 1, 0 none */
	__u32 ustack; /* --stacks: user stack id + 1, 0 none */
	__u32 pad;
};

struct wait_val {
	__u64 ns;
	__u64 count;  /* stretches: times the thread left the CPU in this wait */
	__u64 max_ns;
};

/*
 * Stretches closed but not yet in the aggregate map (wait.bpf.c held_cpu_add,
 * held_off_add), held in the thread's entry by key in small two-way tables: the CPU
 * time under a statement with the part of the time on CPU the kernel did not count as
 * CPU (runnable), and the off-CPU stretches under one key. A slot goes to the map only
 * when another key needs its place, and all at the thread's last switch, so that a
 * backend cycling through a few statements and waits looks nothing up; a read adds them
 * on paper (wait_probe_read).
 */
#define WAIT_HELD_CPU_SETS 16 /* powers of two; two slots a set */
#define WAIT_HELD_OFF_SETS 4
#define WAIT_HELD_CPU (2 * WAIT_HELD_CPU_SETS)
#define WAIT_HELD_OFF (2 * WAIT_HELD_OFF_SETS)

struct wait_held_cpu {
	__u64 stmt;
	__u64 cpu_ns;
	__u64 cpu_max; /* the longest stretch in each: the aggregate's max */
	__u64 run_ns;
	__u64 run_max;
};

struct wait_held_off {
	struct wait_key k;
	struct wait_val v;
};

/* Per thread: where its time is going now. Written at switches and USDT probes. */
struct wait_thread {
	__u64 since;    /* ktime of the last switch: start of the current stretch */
	__u64 first;    /* ktime the accounting of this thread starts */
	__u64 stmt;     /* statement in progress (query__start), 0 none */
	__u64 stmt_off; /* statement the current off-CPU stretch is charged to */
	/*
	 * The task's sum_exec_runtime at `since` (exec_known): the kernel's own count of its
	 * CPU time, which leaves out time the hypervisor gave another guest (steal) and
	 * stays right across a switch this program did not see.
	 */
	__u64 exec;
	/*
	 * The PgBackendStatus path (wait.bpf.c bestatus_stmt): MyBEEntry once read, and
	 * debug_query_string, st_activity_start_timestamp and their statement's hash as
	 * last seen, so that a text is read and hashed only when the statement changed.
	 */
	__u64 be;
	__u64 q_ptr;
	__u64 q_ts;
	__u64 q_hash;
	/*
	 * The wait event pointer (my_wait_event_info) as read while the row said it was
	 * this backend's: fixed from InitProcess() until its exit, which gives the row up
	 * (st_procpid 0) before it points the pointer back at a local word. 0 not read.
	 */
	__u64 wptr;
	__u32 tgid;
	__u32 event;    /* off CPU: wait event read at switch-out */
	__u32 kind;     /* off CPU: enum wait_kind of the current stretch */
	__u32 stack;    /* off CPU, --stacks: stack ids of the switch-out, + 1 */
	__u32 ustack;
	__u8 oncpu;
	__u8 in_xact;   /* between transaction__start and commit/abort (the USDT path) */
	__u8 exec_known;
	__u8 titled;    /* its process's title is final: no need to look it up again */
	__u8 title_read; /* its process's title was read once (the switch-out's read) */
	/*
	 * Preempted (taken off the CPU still runnable) in its CPU stretch, which goes on:
	 * the time until it runs again is the stretch's runnable part (wall time the kernel
	 * did not count as its CPU time), charged where the stretch ends.
	 */
	__u8 preempted;
	__u8 ho_on;      /* which held off-CPU slots are set, a bit each */
	__u8 ho_lru;     /* per set of held_off: 1 when its second slot goes next */
	__u8 pad;
	__u16 hc_lru;    /* the same for held_cpu */
	__u32 hc_on;     /* which held CPU slots are set */
	struct wait_held_cpu held_cpu[WAIT_HELD_CPU];
	struct wait_held_off held_off[WAIT_HELD_OFF];
};

/*
 * A slot of the task-address cache of the programs at sched_switch (waitword.bpf.h):
 * word = TC_VALID | TC_TRACED | tid << TC_TID_SHIFT | address tag; t_in (wait's) the
 * clock at the switch-in of the traced task it holds while that task runs, else 0.
 */
#define TC_VALID     (1ull << 63)
#define TC_TRACED    (1ull << 62)
#define TC_TID_SHIFT 36
#define TC_TAG_MASK  ((1ull << 36) - 1)

struct wait_tcslot {
	__u64 word;
	__u64 t_in;
};

/* Thread ids 64 * i ... 64 * i + 63: which were looked at, and which of those are traced. */
struct wait_pidbits {
	__u64 known;
	__u64 traced;
};

/* Per process: the span its threads were accounted over. */
#define WAIT_TITLE_LEN 96

struct wait_proc {
	__u64 first;  /* ktime of the first accounted stretch */
	__u64 last;   /* ktime of its exit, 0 while it runs */
	__u32 titled; /* title reads so far (the first may be the start-up title) */
	__u32 pad;
	/* the process title as its transactions saw it: the type of a backend that exited */
	char title[WAIT_TITLE_LEN];
};

/* Per CPU. */
struct wait_drops {
	__u64 aggs_full;    /* stretches not added: the aggregate map was full */
	__u64 threads_full; /* switches of threads not followed: the thread map was full */
	__u64 texts_full;
	__u64 stacks_lost;  /* --stacks: stacks that could not be taken */
	__u64 switches;     /* program runs (switches) that involved a followed thread */
	/*
	 * Switches out (in) of a thread last seen leaving (entering) the CPU: one between
	 * was not seen, or the thread was seeded in the wrong state. Its CPU time is still
	 * the kernel's count; only where the rest of the stretch went is a guess.
	 */
	__u64 unpaired;
	/*
	 * DBTAP_WAIT_SELF_TIME=1 (bench/wait-switch.sh): the program's own time, from its
	 * first instruction to its last (one clock read more at each), and its runs, [0]
	 * those of no traced thread, [1] the others: the cost of each kind of switch in one
	 * run, where the kernel's statistics give one mean over both.
	 */
	__u64 self_ns[2];
	__u64 self_runs[2];
};

#ifndef __VMLINUX_H__
#include <stdbool.h>
#include <stdint.h>

#include "bpf/bestatus.h"
#include "target/target.h"

struct wait_probe;

/* Where each traced process keeps its wait event: the u32 at *(u64 *)ptr_addr + field_off. */
struct wait_probe_opts {
	struct target *target;
	const char *binary;   /* the server binary, for the USDT probes */
	int major;            /* PostgreSQL major version, for the probe names */
	uint64_t ptr_addr;    /* run-time address of my_wait_event_info (or MyProc) */
	uint32_t field_off;   /* offset of the u32 behind that pointer */
	uint32_t idle_event;  /* Client:ClientRead */
	bool stacks;
	bool floor;           /* attach an empty program instead (bench/wait-switch.sh) */
	bool self_time;       /* the program times itself (struct wait_drops self_ns) */
	/*
	 * Set (bestatus.beentry_addr != 0, wait_probe_opts_bestatus()): the transaction state
	 * and the statement are read from the backend's PgBackendStatus at its switches
	 * (bestatus.bpf.h), no USDT probe is attached. 0: the USDT path.
	 */
	struct bestatus_cfg bestatus;
};

/* An aggregate entry, read back. */
struct wait_entry {
	struct wait_key k;
	struct wait_val v;
};

struct wait_thread_entry {
	__u32 tid;
	struct wait_thread t;
	/*
	 * Off CPU by t, but switched in since, at t_in (the switch-in noted in the task
	 * cache, not yet taken into t: wait_probe_read_threads()); 0 none.
	 */
	__u64 t_in;
};

struct wait_proc_entry {
	__u32 tgid;
	struct wait_proc p;
};

struct pg_bestatus;

/*
 * The PgBackendStatus path into o, as every user of wait_probe (and doctor) takes it:
 * where the server's major version has a checked layout (pg/layout.c), its binary
 * (loaded like process ref) exports the symbols and bestatus.bpf.h can read the row
 * (bestatus_cfg_init()), the transaction state and the statements are read at the
 * switches, no USDT probe attached; 0, b filled. -1: o left on the USDT path, why in
 * b->why (nothing printed).
 */
int wait_probe_opts_bestatus(struct wait_probe_opts *o, int major, const char *binary,
			     pid_t ref, struct pg_bestatus *b);
/*
 * Whether backend pid is inside a transaction (or a statement) now by its row, as the
 * program tells it at a switch; false on the USDT path, where a transaction open at
 * the start is seen from its next probe only.
 */
bool wait_probe_backend_busy(const struct wait_probe_opts *o, pid_t pid);

/* Opens and loads; NULL with an error and a hint printed. Nothing attached yet. */
struct wait_probe *wait_probe_open(const struct wait_probe_opts *o);
/*
 * Before attach: the accounting of threads already running starts at t0 (ktime ns);
 * a thread seen off CPU in wait event `event` (0 none) is entered as waiting since t0.
 */
void wait_probe_start(struct wait_probe *wp, uint64_t t0);
/* in_xact: a backend waiting for its client inside a transaction (not idle) */
int wait_probe_seed(struct wait_probe *wp, pid_t tid, pid_t tgid, bool oncpu, uint32_t event,
		    bool in_xact);
/*
 * The same with the thread's CPU time so far (schedstat's, in ns), read while it was
 * off CPU: its first stretch is then split by the kernel's count even when it ran
 * between the seeding and the attach.
 */
int wait_probe_seed_exec(struct wait_probe *wp, pid_t tid, pid_t tgid, uint32_t event,
			 bool in_xact, uint64_t exec_ns);
/* Attaches sched_switch, then the USDT probes; -1 with the error printed. */
int wait_probe_attach(struct wait_probe *wp);
/*
 * Cumulative aggregates, count returned, a malloc'd array sorted by key; -1 on failure.
 * The stretches the threads hold closed but not yet added are in it (read after the
 * aggregates: a stretch added meanwhile is late, never counted twice).
 */
int wait_probe_read(struct wait_probe *wp, struct wait_entry **out);
/* Sorts by key and adds up entries with equal keys; the count left. */
int wait_entries_merge(struct wait_entry *e, int n);
int wait_probe_read_threads(struct wait_probe *wp, struct wait_thread_entry **out);
int wait_probe_read_procs(struct wait_probe *wp, struct wait_proc_entry **out);
/* Sample text of a statement hash into buf (WAIT_TEXT_LEN bytes); 0 or -1. */
int wait_probe_text(struct wait_probe *wp, uint64_t stmt, char *buf);
/* Drops summed over CPUs. */
int wait_probe_drops(struct wait_probe *wp, struct wait_drops *out);
/* Frames of a stack id (as stored in a key, + 1), count returned into ips. */
int wait_probe_stack(struct wait_probe *wp, uint32_t id1, uint64_t *ips, int max);
/* CLOCK_MONOTONIC now in ns: the kernel's bpf_ktime_get_ns. */
uint64_t wait_probe_now(void);
/* Probe sites attached (the "tracing" line). */
int wait_probe_nlinks(const struct wait_probe *wp);
void wait_probe_destroy(struct wait_probe *wp);
#endif

#endif
