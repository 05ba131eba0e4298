/* Histograms: log-linear counts for percentiles, log2/linear bars for display. */
#ifndef DBTAP_REPORT_HIST_H
#define DBTAP_REPORT_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/loglinear.h"
#include "util/json.h"

/*
 * Log-linear histogram of raw values (dbtap uses nanoseconds). Filled from a BPF map
 * (same bucket function, bpf/loglinear.h) or with hist_add. Percentiles are reported
 * as the midpoint of the bucket holding the nearest-rank sample: within HIST_REL_ERROR
 * of the true sample value (exact below 32).
 */
#define HIST_REL_ERROR (1.0 / (2 * LL_SUB)) /* 1/64 = 1.5625 % */

struct hist {
	uint64_t counts[LL_BUCKETS];
	uint64_t count; /* number of values */
	uint64_t sum;   /* sum of values, for an exact mean */
};

void hist_reset(struct hist *h);
void hist_add(struct hist *h, uint64_t value, uint64_t times);
/* dst += src. */
void hist_merge(struct hist *dst, const struct hist *src);
/* out = now - before, for interval reports from cumulative kernel counters. */
void hist_delta(struct hist *out, const struct hist *now, const struct hist *before);
/* Recomputes count from the buckets (after filling counts[] directly). */
void hist_recount(struct hist *h);

/* The value reported for a bucket: its midpoint (exact for the unit-wide buckets). */
uint64_t hist_bucket_value(uint32_t idx);
/* p in (0, 100]: nearest-rank percentile, 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double p);
/* That rank among total samples (total > 0): the p-th percentile's, 1 to total. */
uint64_t hist_rank(double p, uint64_t total);
uint64_t hist_min(const struct hist *h);
uint64_t hist_max(const struct hist *h);
double hist_mean(const struct hist *h);

/* p50, p90, p99 and max in one go. */
struct hist_summary {
	uint64_t count;
	double mean;
	uint64_t p50, p90, p99, max;
};
void hist_summarize(const struct hist *h, struct hist_summary *s);

/*
 * Display histograms (--hist SPEC): "log2" or "linear:MIN:MAX:STEP", in display units
 * (microseconds for latencies). The slot arithmetic is disp_slot() of bpf/loglinear.h,
 * so the kernel can fill the slots directly.
 */
struct hist_spec {
	uint32_t kind; /* DISP_LOG2 or DISP_LINEAR */
	uint64_t min, max, step;
	uint32_t n;    /* linear: number of buckets between MIN and MAX (MAX's included) */
};

/* Parses SPEC; 0, or -1 with an error naming it and a hint printed. */
int hist_spec_parse(const char *s, struct hist_spec *spec);
/* Number of meaningful slots: 65 for log2, n + 2 for linear. */
uint32_t hist_spec_slots(const struct hist_spec *spec);
uint32_t hist_spec_slot(const struct hist_spec *spec, uint64_t value);
/* Fills display slots from log-linear counts (approximate at bucket edges; prefer kernel slots). */
void hist_spec_fill(const struct hist_spec *spec, const struct hist *h, uint64_t *slots);

/*
 * Prints slots as ASCII bars: log2 in bpftrace's hist look, linear in SystemTap's
 * @hist_linear look (rows from MIN to MAX, "<MIN" and ">MAX" rows when not empty).
 * unit labels the value column of linear histograms ("us"; log2 rows carry no unit,
 * the caller's caption names it). Empty histograms print one line saying so.
 */
void hist_print(FILE *f, const struct hist_spec *spec, const uint64_t *slots, const char *unit);
/*
 * JSON: an array of {"low_UNIT", "high_UNIT", "count"} for non-empty slots (high null:
 * unbounded); unit ("us") names the slots' unit in the keys, as docs/json.md asks.
 */
void hist_json(struct json *j, const char *key, const struct hist_spec *spec, const uint64_t *slots,
	       const char *unit);

#endif
