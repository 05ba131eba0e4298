/* Histograms folded to Prometheus bucket bounds in the kernel: per backend and per statement. */
#ifndef DBTAP_BPF_SLOTHIST_H
#define DBTAP_BPF_SLOTHIST_H

#include "bpf/loglinear.h"

/*
 * Up to 64 bounds and +Inf. Each bound is the lower edge of a log-linear bucket
 * (serve/buckets.c), so a log-linear bucket lies wholly in one slot: folding the
 * kernel's log-linear index through a table set before load is exact, and costs one
 * map lookup per event instead of one per bucket.
 */
#define SLOT_MAX 65

/* Durations under one key: slot[i] counts those below bound i (slot[n]: the rest). */
struct slot_hist {
	__u64 sum_ns;
	__u64 slot[SLOT_MAX];
};

/* A backend: thread id and start time, so that a reused thread id is another key. */
struct bk_hkey {
	__u32 tid;
	__u32 pad;
	__u64 born;
};

/*
 * A backend's process title as its first timed event saw it (PostgreSQL writes
 * "postgres: USER DB HOST ..." in the argv area): its label set once it has exited.
 */
#define SLOTHIST_TITLE_LEN 96

struct slothist_title {
	char title[SLOTHIST_TITLE_LEN];
};

/* Why a duration is in no histogram: the map of that kind was full. */
enum { SLOTHIST_DROP_BACKEND, SLOTHIST_DROP_KEYED, SLOTHIST_NDROPS };

struct slothist_drops {
	__u64 n[SLOTHIST_NDROPS];
};

#ifndef __VMLINUX_H__
#include <stddef.h>
#include <stdint.h>

/* The log-linear index -> slot table for bounds starting at these indexes (increasing). */
void slothist_fill_table(__u8 *table, const uint32_t *bound_index, int nbounds);
/*
 * Every entry of a slot_hist map: keys (key_size bytes each) and values summed over
 * CPUs when ncpus > 0 (a per-CPU map). Count returned, malloc'd arrays, -1 on failure.
 */
int slothist_dump(int fd, size_t key_size, int ncpus, void **keys, struct slot_hist **vals);
/*
 * The entry under key, read and then deleted: for the key of a backend that has exited,
 * whose entry nobody writes any more. 0, or -1 when there is none.
 */
int slothist_take(int fd, const void *key, struct slot_hist *out);
/*
 * The title kept for key (a struct bk_hkey) in a title map into out (NUL-terminated,
 * as read from the traced process: not trusted further); 0, or -1 when there is none.
 */
int slothist_title_read(int fd, const void *key, struct slothist_title *out);
/* The drop counters of a program (a per-CPU array of one), summed. 0 or -1. */
int slothist_drops_read(int fd, int ncpus, struct slothist_drops *out);
/* Durations counted in h: the sum of its slots. */
uint64_t slothist_count(const struct slot_hist *h);

/*
 * slothist.bpf.h's configuration, before load: on with nbounds > 0 bounds (their
 * log-linear indexes), else off with its backend map cut to one entry; titles: each
 * backend's title kept beside its histogram (for a program that keeps none of its
 * own), else its title map cut to one entry.
 */
#define SLOTHIST_RODATA(skel, bound_index, nbounds, titles)                              \
	do {                                                                             \
		if ((nbounds) > 0) {                                                     \
			(skel)->rodata->slothist_on = true;                              \
			slothist_fill_table((__u8 *)(skel)->rodata->slothist_table,      \
					    (bound_index), (nbounds));                   \
		} else {                                                                 \
			bpf_map__set_max_entries((skel)->maps.bk_hists, 1);              \
		}                                                                        \
		if ((nbounds) > 0 && (titles))                                           \
			(skel)->rodata->slothist_titles = true;                          \
		else                                                                     \
			bpf_map__set_max_entries((skel)->maps.bk_titles, 1);             \
	} while (0)
#endif

#endif
