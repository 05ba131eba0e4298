/* Prometheus exposition: the text format 0.0.4 and OpenMetrics 1.0.0, families and samples. */
#ifndef DBTAP_SERVE_EXPO_H
#define DBTAP_SERVE_EXPO_H

#include <stdbool.h>
#include <stdint.h>

#include "util/strbuf.h"

enum expo_type { EXPO_COUNTER, EXPO_GAUGE, EXPO_HISTOGRAM, EXPO_SUMMARY };

struct expo_label {
	const char *name, *value;
};

/* Histogram bounds: each one the lower edge of a log-linear bucket (serve/buckets.h). */
struct expo_buckets {
	int n;
	uint64_t ns[64];     /* bound in nanoseconds */
	uint32_t index[64];  /* the log-linear bucket that starts at that bound */
};

struct expo {
	struct strbuf *out;
	bool om;             /* OpenMetrics: counters' families lose _total, # EOF at the end */
	char family[128];    /* the family being written, without _total */
	enum expo_type type;
	unsigned long series;
};

#define EXPO_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_OM_TYPE   "application/openmetrics-text; version=1.0.0; charset=utf-8"

void expo_init(struct expo *e, struct strbuf *out, bool openmetrics);
/*
 * Starts a family: name as the samples spell it minus the type's suffix (counters
 * without _total), unit ("seconds", or NULL) the last word of the name.
 */
void expo_family(struct expo *e, const char *name, enum expo_type type, const char *unit,
		 const char *help);
void expo_u64(struct expo *e, const struct expo_label *l, int nl, uint64_t v);
void expo_double(struct expo *e, const struct expo_label *l, int nl, double v);
/* Nanoseconds written as seconds, exactly (nine decimals). */
void expo_seconds(struct expo *e, const struct expo_label *l, int nl, uint64_t ns);
/* Cumulative buckets, _count (= the +Inf bucket) and _sum in seconds, from ll[LL_BUCKETS]. */
void expo_histogram(struct expo *e, const struct expo_label *l, int nl,
		    const struct expo_buckets *b, const uint64_t *ll, uint64_t sum_ns);
/* The same from per-bucket counts: slot[k] below bound k, slot[b->n] above the last. */
void expo_histogram_slots(struct expo *e, const struct expo_label *l, int nl,
			  const struct expo_buckets *b, const uint64_t *slot, uint64_t sum_ns);
/* A summary without quantiles: _count and _sum (seconds). */
void expo_summary(struct expo *e, const struct expo_label *l, int nl, uint64_t count,
		  uint64_t sum_ns);
/* OpenMetrics' "# EOF"; nothing in the text format. */
void expo_finish(struct expo *e);

/*
 * A label value as the formats allow it: valid UTF-8 (other bytes become '?'), control
 * characters as spaces, at most max bytes (cut on a character boundary). Unescaped.
 */
void expo_clean_value(const char *in, char *out, size_t max);

#endif
