/* dbtap bench: a write breakpoint on one thread (per task), for the workload's global. */
#ifndef DBTAP_BENCH_BREAKPOINT_H
#define DBTAP_BENCH_BREAKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Opens an 8-byte write breakpoint at addr that fires only in thread tid, on whatever
 * CPU it runs (perf/breakpoint.h's per-CPU sets fire for every process instead).
 * sampling: every hit overflows, so an attached BPF program runs; otherwise the
 * kernel only counts. The fd, or a negative errno with the reason written to reason.
 */
int bench_breakpoint_open(pid_t tid, uint64_t addr, bool sampling, char *reason, size_t rlen);
/* Hits counted by the kernel; -1 on a read error. */
int bench_breakpoint_count(int fd, uint64_t *count);

#endif
