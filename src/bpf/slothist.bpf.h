/* The kernel side of slothist.h: a backend's histogram, written only by its own thread. */
#ifndef DBTAP_BPF_SLOTHIST_BPF_H
#define DBTAP_BPF_SLOTHIST_BPF_H

#include "bpf/slothist.h"

/* Set before load: off for the commands that print their own histograms. */
const volatile bool slothist_on = false;
const volatile __u8 slothist_table[LL_BUCKETS];
/* Set before load: each backend's title in bk_titles, made with its histogram. */
const volatile bool slothist_titles = false;

/* The value a new entry starts from: a slot_hist is too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot_hist);
} slothist_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slothist_drops);
} slothist_drops SEC(".maps");

/*
 * Per backend. A plain hash, not an LRU: user space deletes the entries of backends
 * that exited once it has added them to their label set, and a full map counts a drop
 * instead of evicting another backend's counts. Allocated as backends appear.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct bk_hkey);
	__type(value, struct slot_hist);
} bk_hists SEC(".maps");

/*
 * Per backend, beside bk_hists and under the same key: the process title when the
 * backend's histogram was made, so a backend that exits before user space reads the
 * map keeps its database, user and type. Deleted by user space with the histogram.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct bk_hkey);
	__type(value, struct slothist_title);
} bk_titles SEC(".maps");

static __always_inline void slothist_drop(__u32 why)
{
	__u32 z = 0;
	struct slothist_drops *d = bpf_map_lookup_elem(&slothist_drops, &z);

	if (d && why < SLOTHIST_NDROPS)
		d->n[why]++;
}

/* The entry under key in map, made when missing; NULL (and a drop counted) when full. */
static __always_inline struct slot_hist *slothist_get(void *map, const void *key, __u32 why)
{
	struct slot_hist *h = bpf_map_lookup_elem(map, key), *zero;
	__u32 z = 0;

	if (h)
		return h;
	zero = bpf_map_lookup_elem(&slothist_zero, &z);
	if (!zero)
		return NULL;
	/* EEXIST when another CPU made it meanwhile: the lookup finds it then */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	h = bpf_map_lookup_elem(map, key);
	if (!h)
		slothist_drop(why);
	return h;
}

/*
 * The --buckets slot of d. A global function: loglinear_index()'s comparisons are
 * branches to the verifier, which walked each combination of them again on every path
 * of the caller's that reached it (1,400 verified instructions per call site).
 */
__noinline int slothist_slot(__u64 d)
{
	__u32 idx = loglinear_index(d), s = SLOT_MAX - 1;

	if (idx < LL_BUCKETS)
		s = slothist_table[idx];
	return s < SLOT_MAX ? s : SLOT_MAX - 1;
}

static __always_inline void slothist_add(struct slot_hist *h, __u64 d)
{
	__u64 s = (__u32)slothist_slot(d);

	/* one register for the test and the index, as the verifier needs to see it */
	barrier_var(s);
	if (s < SLOT_MAX)
		h->slot[s]++;
	h->sum_ns += d;
}

/*
 * d (ns) in the histogram of the backend (tid, born). A global function: the verifier
 * checks it once, on its own, where inlined it was checked again on every path of the
 * program calling it (serve's tx_multi: 9,684 verified instructions, 2,975 without it).
 * Callers test slothist_on first, so that the commands without it never call it.
 */
__noinline int slothist_backend(__u32 tid, __u64 born, __u64 d)
{
	struct bk_hkey k = { .tid = tid, .born = born };
	struct slot_hist *h;

	if (!slothist_on)
		return 0;
	h = bpf_map_lookup_elem(&bk_hists, &k);
	if (!h) {
		h = slothist_get(&bk_hists, &k, SLOTHIST_DROP_BACKEND);
		/* the backend's first event: its title once, a full map only costs the label */
		if (h && slothist_titles) {
			struct task_struct *task = (struct task_struct *)bpf_get_current_task();
			unsigned long arg = BPF_CORE_READ(task, mm, arg_start);
			struct slothist_title t = {};

			bpf_probe_read_user_str(t.title, sizeof(t.title), (void *)arg);
			bpf_map_update_elem(&bk_titles, &k, &t, BPF_NOEXIST);
		}
	}
	if (h)
		slothist_add(h, d);
	return 0;
}

#endif
