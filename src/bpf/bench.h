/* User side of bench.bpf.c: load the counting handler and the empty program, attach, count. */
#ifndef DBTAP_BPF_BENCH_H
#define DBTAP_BPF_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bench_bpf;

/* Opens and loads both programs once; NULL with an error printed. */
struct bench_bpf *bench_bpf_open(void);
void bench_bpf_destroy(struct bench_bpf *b);

/*
 * Attach the counting handler (handler = true) or the empty program to one site of
 * pid's binary. The uprobe is placed by file offset; the USDT by provider and name
 * (libbpf raises its semaphore in pid). 0, or a negative errno with the reason left in
 * reason (the caller decides whether that makes the mechanism "not available").
 */
int bench_bpf_attach_uprobe(struct bench_bpf *b, bool handler, bool retprobe, pid_t pid,
			    const char *binary, uint64_t offset, char *reason, size_t rlen);
int bench_bpf_attach_usdt(struct bench_bpf *b, bool handler, pid_t pid, const char *binary,
			  const char *provider, const char *name, char *reason, size_t rlen);
/* Attaches to an opened perf event; the link owns perf_fd from then on (closes it). */
int bench_bpf_attach_perf(struct bench_bpf *b, bool handler, int perf_fd, char *reason,
			  size_t rlen);
/* Destroys every link: probes gone, semaphores lowered, perf events closed. */
void bench_bpf_detach(struct bench_bpf *b);

/* The handler's count summed over CPUs since the last reset; -1 on a map error. */
int bench_bpf_count(struct bench_bpf *b, uint64_t *count);
int bench_bpf_reset(struct bench_bpf *b);

/* Which variant of a program a mechanism runs: each attach type needs its own. */
enum bench_attach_prog { BENCH_PROG_UPROBE, BENCH_PROG_USDT, BENCH_PROG_PERF };

/*
 * The kernel's run count and run time of one program (the variant kind runs),
 * cumulative since load; they only move while statistics are on.
 */
int bench_bpf_prog_stats(struct bench_bpf *b, bool handler, enum bench_attach_prog kind,
			 uint64_t *runs, uint64_t *ns);
/*
 * Turns BPF run-time statistics on for every program (BPF_ENABLE_STATS) until the
 * returned fd is closed; -1 with the reason. They cost two clock reads per run, so
 * they stay off while hits are timed.
 */
int bench_bpf_stats_on(char *reason, size_t rlen);

#endif
