/* dbtap bench --vs-bpftrace: bpftrace counting the same site, run beside dbtap's handler. */
#ifndef DBTAP_BENCH_BPFTRACE_H
#define DBTAP_BENCH_BPFTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpftrace_run {
	pid_t pid; /* 0 when none runs */
	int out;   /* bpftrace's stdout and stderr */
	char buf[8192];
	size_t len;
};

/* The bpftrace on PATH (malloc'd), or NULL. */
char *bpftrace_find(void);
/* bpftrace's own version line ("bpftrace v0.17.0") into buf; 0 or -1. */
int bpftrace_version(const char *path, char *buf, size_t len);

/*
 * Starts `bpftrace -p PID` counting probe (a bpftrace probe spec such as
 * "uprobe:/bin/x:fn") with @c = count(), and waits until its probes are attached
 * (its BEGIN runs after every attach). 0; 1 when it could not attach, with the reason
 * (bpftrace's own error line) in reason; -1 when interrupted by Ctrl-C.
 */
int bpftrace_start(struct bpftrace_run *r, const char *path, const char *probe, pid_t pid,
		   char *reason, size_t rlen);
/* Stops it as Ctrl-C would, reads the final count. 0, or 1 with the reason. */
int bpftrace_stop(struct bpftrace_run *r, uint64_t *count, char *reason, size_t rlen);
/* Kills and reaps it at once. Safe when none runs. */
void bpftrace_kill(struct bpftrace_run *r);

#endif
