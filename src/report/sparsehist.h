/* Sparse log-linear histograms: only the buckets that hold something, as the kernel keeps them. */
#ifndef DBTAP_REPORT_SPARSEHIST_H
#define DBTAP_REPORT_SPARSEHIST_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The buckets of bpf/loglinear.h that are not empty, sorted by bucket. A dense struct
 * hist is 15 KiB whatever it holds; a statement's figure typically fills a few dozen
 * buckets, and the kernel's map of them is sparse already (stat.bpf.c's hists map),
 * so per-statement tables keep them sparse too: 16 bytes per non-empty bucket.
 */
struct sparse_bucket {
	uint32_t bucket;
	uint64_t count;
};

struct sparse_hist {
	struct sparse_bucket *v;
	uint32_t n, cap;
	bool sorted; /* false after sparse_hist_add until sparse_hist_finish */
};

void sparse_hist_free(struct sparse_hist *h);
/* Adds count to bucket, in any order (call sparse_hist_finish before reading). -1: no memory. */
int sparse_hist_add(struct sparse_hist *h, uint32_t bucket, uint64_t count);
/* Sorts the buckets and merges the repeated ones, in place. */
void sparse_hist_finish(struct sparse_hist *h);
/* dst = a copy of src. 0 or -1. */
int sparse_hist_copy(struct sparse_hist *dst, const struct sparse_hist *src);
/* dst += src (both finished). 0 or -1. */
int sparse_hist_merge(struct sparse_hist *dst, const struct sparse_hist *src);
/*
 * out = now - before (finished), for intervals from cumulative kernel counters; a bucket
 * that shrank was reset and counts as it is now, as hist_delta does. 0 or -1.
 */
int sparse_hist_delta(struct sparse_hist *out, const struct sparse_hist *now,
		      const struct sparse_hist *before);
uint64_t sparse_hist_count(const struct sparse_hist *h);
/* Nearest-rank percentile (p in (0, 100]) as the bucket's midpoint; 0 when empty. */
uint64_t sparse_hist_percentile(const struct sparse_hist *h, double p);
uint64_t sparse_hist_max(const struct sparse_hist *h);

#endif
