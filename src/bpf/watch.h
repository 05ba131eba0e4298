/* dbtap watch: what the breakpoint program shares with user space, and its loader's API. */
#ifndef DBTAP_BPF_WATCH_H
#define DBTAP_BPF_WATCH_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* One write, streamed with --events. */
struct watch_event {
	__u64 ts;     /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 value;  /* the watched bytes right after the write (x86 traps after it) */
	__u64 ip;     /* user address of the instruction after the one that wrote */
	__u32 pid;    /* tgid */
	__u32 tid;
};

/* argv[0] as the process had set it at its first hit (PostgreSQL writes its title there). */
struct watch_title {
	char title[96];
};

#ifndef __bpf__
#include <stdbool.h>
#include <stdint.h>

#include "target/expr.h"
#include "target/target.h"

struct watch_probe;

struct watch_opts {
	const struct target *target;
	bool events;                     /* stream every hit through the ring buffer */
	uint32_t ring_bytes;             /* its size: a power of 2, >= the page size; 0: 1 MiB */
	/* Called for each event from watch_probe_poll_events(); its value is not used. */
	int (*on_event)(void *ctx, const struct watch_event *e);
	void *ctx;
};

/* Per-process count read from the kernel. */
struct watch_count {
	uint32_t pid;
	uint64_t count;
};

/*
 * Opens and loads the program with the target's filter; NULL with the error printed.
 * Loading comes first, before the target's ELF is read: libbpf's transient copy of
 * the kernel's BTF and the ELF libraries' memory then never add up in the peak RSS.
 */
struct watch_probe *watch_probe_load(const struct watch_opts *o);
/*
 * Opens a breakpoint of len bytes at addr on every CPU and attaches the program to
 * each. 0, or -1 with the error printed and errno from the breakpoint (ENOSPC when
 * all slots are taken); nothing stays attached then.
 */
int watch_probe_attach(struct watch_probe *w, uint64_t addr, int len, enum watch_mode mode);
/* Hands pending events to on_event, without waiting: how many, or -1. */
int watch_probe_poll_events(struct watch_probe *w);
/* Counts per process so far (totals since attach); *out is malloc'd. Number or -1. */
int watch_probe_read_counts(struct watch_probe *w, struct watch_count **out);
/* The title recorded at pid's first hit into buf; 0, or -1 when none was. */
int watch_probe_title(struct watch_probe *w, uint32_t pid, char *buf, size_t len);
/*
 * Drops pid's entries (its count and title) from the kernel's maps: for a process
 * that has exited, once its count is kept in user space, so short-lived connections
 * never fill the maps.
 */
void watch_probe_forget(struct watch_probe *w, uint32_t pid);
/* Writes not attributed because the counts map was full. */
uint64_t watch_probe_unattributed(const struct watch_probe *w);
/* Events lost because the ring buffer was full; hits of processes outside the target. */
uint64_t watch_probe_dropped(const struct watch_probe *w);
uint64_t watch_probe_ignored(const struct watch_probe *w);
/* CPUs the breakpoint is open on. */
int watch_probe_ncpus(const struct watch_probe *w);
/* Detaches everything, closes every breakpoint fd. NULL is fine. */
void watch_probe_destroy(struct watch_probe *w);
#endif

#endif
