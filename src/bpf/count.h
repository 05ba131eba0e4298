/* Structures shared by count.bpf.c and its user side: hits per probe, per process. */
#ifndef DBTAP_BPF_COUNT_H
#define DBTAP_BPF_COUNT_H

/* Hard limit of probes one count session attaches (the --max-probes ceiling). */
#define COUNT_MAX_PROBES 1024

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct count_key {
	__u32 probe; /* index into the probe list: the attach cookie */
	__u32 pid;   /* tgid */
};

#define COUNT_TITLE_LEN 64

/* --by: hits of one process, and its title (argv area) when first seen. */
struct count_val {
	__u64 hits;
	char title[COUNT_TITLE_LEN];
};

#ifndef __VMLINUX_H__
#include <stdint.h>

#include "target/probespec.h"
#include "target/target.h"

struct count_probe;

/*
 * Attaches every probe of the list (cookie = index). NULL with error+hint printed.
 * empty: an empty program instead, which counts nothing (the floor, for bench/).
 */
struct count_probe *count_probe_open(struct target *t, const struct probe_list *probes,
				     bool by_pid, bool empty);
/* Cumulative hits per probe (n = probes->n entries into out). 0 or -1. */
int count_probe_read(struct count_probe *cp, uint64_t *out);
/* Cumulative hits per (probe, pid) with by_pid; count returned, malloc'd arrays. */
int count_probe_read_pids(struct count_probe *cp, struct count_key **keys, struct count_val **vals);
/* Sites attached: USDT probes have one or more, functions one. */
int count_probe_nsites(const struct count_probe *cp);
void count_probe_destroy(struct count_probe *cp);
#endif

#endif
