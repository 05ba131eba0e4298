/* --buckets: bounds in seconds to log-linear bucket edges, so cumulative counts are exact. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/loglinear.h"
#include "serve/buckets.h"
#include "util/error.h"

/* The edge nearest to ns: a bucket's lower bound, or the next bucket's. */
static void snap(uint64_t ns, uint64_t *edge, uint32_t *index)
{
	uint32_t i = loglinear_index(ns);
	uint64_t lo = loglinear_lower(i), hi = lo + loglinear_width(i);

	if (ns - lo <= hi - ns) {
		*edge = lo;
		*index = i;
	} else {
		*edge = hi;
		*index = i + 1;
	}
}

int buckets_parse(const char *list, struct expo_buckets *b)
{
	const char *p = list;

	memset(b, 0, sizeof(*b));
	while (*p) {
		char *end;
		errno = 0;
		double s = strtod(p, &end);
		if (end == p || errno || !(s > 0) || s > 3600 || (*end && *end != ',')) {
			error("bad --buckets '%s': '%.*s' is not a duration in seconds", list,
			      (int)strcspn(p, ","), p);
			hint("bounds in seconds, increasing, comma-separated, above 0 and up to"
			     " 3600, e.g. --buckets %s", "0.001,0.01,0.1,1");
			return -1;
		}
		if (b->n == (int)(sizeof(b->ns) / sizeof(b->ns[0]))) {
			error("bad --buckets '%s': more than %d bounds", list, b->n);
			hint("Prometheus histograms work best with a dozen or two bounds");
			return -1;
		}
		uint64_t ns = (uint64_t)llround(s * 1e9);
		snap(ns ? ns : 1, &b->ns[b->n], &b->index[b->n]);
		if (b->n && b->ns[b->n] <= b->ns[b->n - 1]) {
			error("bad --buckets '%s': %.*s is not above the bound before it"
			      " (bounds closer than 1/32 become one)", list, (int)strcspn(p, ","), p);
			hint("give increasing bounds, each at least 1/32 above the one before");
			return -1;
		}
		b->n++;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			error("bad --buckets '%s': it ends with a comma", list);
			hint("e.g. --buckets 0.001,0.01,0.1,1");
			return -1;
		}
	}
	if (!b->n) {
		error("bad --buckets '': no bounds");
		hint("e.g. --buckets 0.001,0.01,0.1,1");
		return -1;
	}
	return 0;
}
