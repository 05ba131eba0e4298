/* Hardware breakpoints (watchpoints) through perf_event_open, one per CPU. */
#ifndef DBTAP_PERF_BREAKPOINT_H
#define DBTAP_PERF_BREAKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/expr.h"

/*
 * One breakpoint on every online CPU with pid -1: a per-CPU event fires for whatever
 * task runs there, so processes forked after it was opened are covered too (a
 * per-task event with inherit only reaches later children, never running siblings).
 * Who counts is decided by the BPF program attached to each fd.
 */
struct breakpoint_set {
	int n;       /* fds opened */
	int *fds;
	int *cpus;   /* cpu of fds[i] */
	uint64_t addr;
	int len;
	enum watch_mode mode;
};

/*
 * Opens the set (disabled = 0: counting starts at once). On failure closes whatever
 * was opened, prints an error naming the address and a hint for the errno (ENOSPC:
 * every slot taken; EINVAL: alignment or length; EACCES/EPERM: privileges), and
 * returns -1 with errno set.
 */
int breakpoint_set_open(struct breakpoint_set *s, uint64_t addr, int len, enum watch_mode mode);
void breakpoint_set_close(struct breakpoint_set *s);
/* Hits counted by the kernel on all CPUs, of every process (no filter). */
uint64_t breakpoint_set_count(const struct breakpoint_set *s);
/*
 * One 8-byte write breakpoint at addr that fires only in thread tid, on whatever CPU it
 * runs (the per-CPU sets above fire for every process instead). sampling: every hit
 * overflows, so an attached BPF program runs; otherwise the kernel only counts. The
 * fd, or a negative errno with the reason written to reason.
 */
int breakpoint_open_task(pid_t tid, uint64_t addr, bool sampling, char *reason, size_t rlen);
/* Hits counted by the kernel on one breakpoint fd; -1 on a read error. */
int breakpoint_read_count(int fd, uint64_t *count);
/* Debug address slots per CPU on this architecture (x86: DR0-DR3). */
int breakpoint_slots(void);

#endif
