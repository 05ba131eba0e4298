/* dbtap bench's workload: a child process that calls one probe site in a loop and counts. */
#ifndef DBTAP_BENCH_WORKLOAD_H
#define DBTAP_BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The functions of sites.S; each has one known first instruction. */
enum bench_site {
	SITE_NOP,       /* nop; ret */
	SITE_PUSH,      /* push %rbp; ... */
	SITE_NOP5,      /* nopl 0x0(%rax,%rax,1); ret */
	SITE_STORE,     /* mov %rdi,bench_watched(%rip); ret */
	SITE_USDT,      /* USDT dbtap_bench:site, no semaphore */
	SITE_USDT_SEMA, /* USDT dbtap_bench:sema_site behind its semaphore */
	SITE_SYSCALL,   /* getpgid(0) */
	SITE_MAX
};

enum bench_workload {
	WORKLOAD_TRIG, /* call the site as fast as possible */
	WORKLOAD_MATH, /* 500 sin/cos/sqrt iterations, then one call of the site */
};

#define BENCH_MAX_THREADS 64
#define BENCH_USDT_PROVIDER "dbtap_bench"

/* Whether this architecture has the sites (x86-64 only). */
bool bench_sites_available(void);
/* The symbol of a site's function in dbtap's own binary ("bench_fn_nop"). */
const char *bench_site_symbol(enum bench_site site);
/* USDT name of a USDT site ("site", "sema_site"), NULL for the others. */
const char *bench_site_usdt(enum bench_site site);
/* The watched global's address: the same in the forked child as here. */
uint64_t bench_watched_addr(void);

struct bench_thread_result {
	pid_t tid;
	uint64_t iterations; /* the workload's own count of site calls */
	uint64_t elapsed_ns; /* from this thread's start to its stop */
	/*
	 * The thread's CPU time over the same span, kernel time in its probes included:
	 * unlike elapsed_ns, it does not grow while other processes hold the CPU.
	 */
	uint64_t cpu_ns;
};

/* Shared (MAP_SHARED) between dbtap and the child: flags one way, results back. */
struct bench_shared {
	int ready; /* threads waiting for go */
	int go;
	int stop;
	int finished; /* threads that wrote their result */
	struct bench_thread_result t[BENCH_MAX_THREADS];
};

struct bench_child {
	pid_t pid; /* 0 when none runs */
	int nthreads;
	struct bench_shared *sh;
};

/*
 * Forks the workload (no exec: the sites stay in dbtap's own binary, at the same
 * addresses) with nthreads threads, and waits until every thread waits for go and
 * has published its tid. 0, or -1 with an error printed and nothing left running.
 */
int bench_child_start(struct bench_child *c, enum bench_site site, enum bench_workload w,
		      int nthreads);
void bench_child_go(struct bench_child *c);
/*
 * Tells the threads to stop and reaps the child. 0 when every thread reported its
 * result, -1 with an error printed otherwise.
 */
int bench_child_stop(struct bench_child *c);
/* Kills and reaps the child at once (errors, Ctrl-C). Safe when none runs. */
void bench_child_kill(struct bench_child *c);
/* Kills the child if it still runs and frees the shared page. */
void bench_child_release(struct bench_child *c);
/*
 * Sum of the threads' iterations, and calls per second summed over the threads: per
 * second of each thread's CPU time (cpu), or of wall-clock time.
 */
uint64_t bench_child_iterations(const struct bench_child *c);
double bench_child_rate(const struct bench_child *c, bool cpu);
/* Mean CPU nanoseconds per site call in one thread (probe handling included). */
double bench_child_ns_per_call(const struct bench_child *c);

#endif
