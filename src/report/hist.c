/* Histograms: log-linear percentiles and ASCII bars (bpftrace hist, SystemTap @hist_linear). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "util/error.h"

#define BAR_WIDTH 50

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist_add(struct hist *h, uint64_t value, uint64_t times)
{
	h->counts[loglinear_index(value)] += times;
	h->count += times;
	h->sum += value * times;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->sum += src->sum;
}

void hist_delta(struct hist *out, const struct hist *now, const struct hist *before)
{
	/* Counters only grow; a smaller value means the slot was reset: take it as is. */
	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		out->counts[i] = now->counts[i] >= before->counts[i] ?
				 now->counts[i] - before->counts[i] : now->counts[i];
	out->count = now->count >= before->count ? now->count - before->count : now->count;
	out->sum = now->sum >= before->sum ? now->sum - before->sum : now->sum;
}

void hist_recount(struct hist *h)
{
	h->count = 0;
	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		h->count += h->counts[i];
}

uint64_t hist_bucket_value(uint32_t idx)
{
	return loglinear_lower(idx) + loglinear_width(idx) / 2;
}

uint64_t hist_rank(double p, uint64_t total)
{
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)total);

	if (rank < 1)
		rank = 1;
	return rank > total ? total : rank;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t total = 0, rank, seen = 0;

	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		total += h->counts[i];
	if (!total)
		return 0;
	if (p <= 0)
		return hist_min(h);
	rank = hist_rank(p, total);
	for (uint32_t i = 0; i < LL_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			return hist_bucket_value(i);
	}
	return hist_max(h);
}

uint64_t hist_min(const struct hist *h)
{
	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		if (h->counts[i])
			return hist_bucket_value(i);
	return 0;
}

uint64_t hist_max(const struct hist *h)
{
	for (uint32_t i = LL_BUCKETS; i-- > 0;)
		if (h->counts[i])
			return hist_bucket_value(i);
	return 0;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

void hist_summarize(const struct hist *h, struct hist_summary *s)
{
	s->count = h->count;
	s->mean = hist_mean(h);
	s->p50 = hist_percentile(h, 50);
	s->p90 = hist_percentile(h, 90);
	s->p99 = hist_percentile(h, 99);
	s->max = hist_max(h);
}

/*
 * Bounds on MIN, MAX and STEP (display units: 10^12 us is eleven days), so that the
 * bucket edges, MIN + n * STEP, never wrap around.
 */
#define HIST_SPEC_MAX 1000000000000ull

/* A plain decimal number: no sign, no spaces, no empty field. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int hist_spec_parse(const char *s, struct hist_spec *spec)
{
	char buf[128], *f[4];
	int n = 0;
	uint64_t buckets;

	memset(spec, 0, sizeof(*spec));
	if (!strcmp(s, "log2")) {
		spec->kind = DISP_LOG2;
		return 0;
	}
	if (strncmp(s, "linear:", 7) || strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	/* exactly four fields, empty ones included: "linear::0:10" is not "linear:0:10" */
	for (char *p = buf;; p++) {
		char *c = strchr(p, ':');
		if (n == 4)
			goto bad;
		f[n++] = p;
		if (!c)
			break;
		*c = '\0';
		p = c;
	}
	if (n != 4)
		goto bad;
	if (parse_u64(f[1], &spec->min) || parse_u64(f[2], &spec->max) ||
	    parse_u64(f[3], &spec->step))
		goto bad;
	if (spec->min > HIST_SPEC_MAX || spec->max > HIST_SPEC_MAX || spec->step > HIST_SPEC_MAX) {
		error("histogram '%s' goes past %llu", s, (unsigned long long)HIST_SPEC_MAX);
		hint("MIN, MAX and STEP are at most %llu (microseconds: eleven days)",
		     (unsigned long long)HIST_SPEC_MAX);
		return -1;
	}
	if (spec->step == 0 || spec->max <= spec->min) {
		error("histogram '%s' needs MIN < MAX and STEP > 0", s);
		hint("for example --hist linear:0:1000:50 (microseconds)");
		return -1;
	}
	buckets = (spec->max - spec->min) / spec->step + 1;
	if (buckets > DISP_LINEAR_MAX) {
		error("histogram '%s' has %" PRIu64 " buckets, at most %d are allowed", s, buckets,
		      DISP_LINEAR_MAX);
		hint("use a larger STEP, or --hist log2");
		return -1;
	}
	spec->kind = DISP_LINEAR;
	spec->n = (uint32_t)buckets;
	return 0;
bad:
	error("bad histogram '%s'", s);
	hint("use --hist log2 or --hist linear:MIN:MAX:STEP (microseconds, e.g. linear:0:1000:50)");
	return -1;
}

uint32_t hist_spec_slots(const struct hist_spec *spec)
{
	return spec->kind == DISP_LINEAR ? spec->n + 2 : 65;
}

uint32_t hist_spec_slot(const struct hist_spec *spec, uint64_t value)
{
	return disp_slot(spec->kind, value, spec->min, spec->step, spec->n);
}

void hist_spec_fill(const struct hist_spec *spec, const struct hist *h, uint64_t *slots)
{
	memset(slots, 0, DISP_SLOTS * sizeof(*slots));
	for (uint32_t i = 0; i < LL_BUCKETS; i++)
		if (h->counts[i])
			slots[hist_spec_slot(spec, hist_bucket_value(i))] += h->counts[i];
}

/* bpftrace's compact numbers: 1K, 4M, 2G for powers of 1024. */
static void fmt_pow(char *buf, size_t len, uint64_t v)
{
	static const char sfx[] = "KMGTPE";
	int k = -1;

	while (v >= 1024 && v % 1024 == 0 && k < 5) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, sfx[k]);
}

/* [low, high) of a log2 slot; high is 0 for the unbounded last one. */
static void log2_range(uint32_t slot, uint64_t *low, uint64_t *high)
{
	if (slot == 0) {
		*low = 0;
		*high = 1;
		return;
	}
	*low = 1ull << (slot - 1);
	*high = slot < 64 ? 1ull << slot : 0;
}

static void bar(FILE *f, uint64_t count, uint64_t top)
{
	int n = top ? (int)((count * BAR_WIDTH + top - 1) / top) : 0;

	for (int i = 0; i < BAR_WIDTH; i++)
		fputc(i < n ? '@' : ' ', f);
}

static bool range_used(const uint64_t *slots, uint32_t nslots, uint32_t *first, uint32_t *last,
		       uint64_t *top)
{
	bool any = false;

	*top = 0;
	for (uint32_t i = 0; i < nslots; i++) {
		if (!slots[i])
			continue;
		if (!any)
			*first = i;
		*last = i;
		any = true;
		if (slots[i] > *top)
			*top = slots[i];
	}
	return any;
}

void hist_print(FILE *f, const struct hist_spec *spec, const uint64_t *slots, const char *unit)
{
	uint32_t nslots = hist_spec_slots(spec), first = 0, last = 0;
	uint64_t top;

	if (!range_used(slots, nslots, &first, &last, &top)) {
		fprintf(f, "  (no values)\n");
		return;
	}
	if (spec->kind == DISP_LOG2) {
		/* bpftrace's look: ranges in the caller's unit, named in its caption. */
		for (uint32_t i = first; i <= last; i++) {
			uint64_t lo, hi;
			char a[24], b[24], label[64];

			log2_range(i, &lo, &hi);
			fmt_pow(a, sizeof(a), lo);
			if (i <= 1)
				snprintf(label, sizeof(label), "[%s]", a);
			else if (!hi)
				snprintf(label, sizeof(label), "[%s, ...)", a);
			else {
				fmt_pow(b, sizeof(b), hi);
				snprintf(label, sizeof(label), "[%s, %s)", a, b);
			}
			fprintf(f, "%-16s %10" PRIu64 " |", label, slots[i]);
			bar(f, slots[i], top);
			fprintf(f, "|\n");
		}
		return;
	}

	/* Linear: the bucket rows between the first and last used ones, SystemTap style. */
	char maxlabel[32];
	int w;

	snprintf(maxlabel, sizeof(maxlabel), ">%" PRIu64, spec->min + (spec->n - 1) * spec->step);
	w = (int)strlen(maxlabel);
	if (w < 6)
		w = 6;
	fprintf(f, "%*s |", w, unit);
	for (int i = 0; i < BAR_WIDTH; i++)
		fputc('-', f);
	fprintf(f, " count\n");
	for (uint32_t i = first; i <= last; i++) {
		char label[32];

		if (i == 0)
			snprintf(label, sizeof(label), "<%" PRIu64, spec->min);
		else if (i == spec->n + 1)
			snprintf(label, sizeof(label), "%s", maxlabel);
		else
			snprintf(label, sizeof(label), "%" PRIu64, spec->min + (i - 1) * spec->step);
		fprintf(f, "%*s |", w, label);
		bar(f, slots[i], top);
		fprintf(f, " %" PRIu64 "\n", slots[i]);
	}
}

void hist_json(struct json *j, const char *key, const struct hist_spec *spec, const uint64_t *slots,
	       const char *unit)
{
	uint32_t nslots = hist_spec_slots(spec);
	char low[32], high[32];

	snprintf(low, sizeof(low), "low_%s", unit);
	snprintf(high, sizeof(high), "high_%s", unit);

	json_array_begin(j, key);
	for (uint32_t i = 0; i < nslots; i++) {
		uint64_t lo, hi;
		bool bounded_lo = true, bounded_hi = true;

		if (!slots[i])
			continue;
		if (spec->kind == DISP_LOG2) {
			log2_range(i, &lo, &hi);
			bounded_hi = hi != 0;
		} else if (i == 0) {
			lo = 0;
			hi = spec->min;
		} else if (i == spec->n + 1) {
			lo = spec->min + spec->n * spec->step;
			hi = 0;
			bounded_hi = false;
		} else {
			lo = spec->min + (i - 1) * spec->step;
			hi = lo + spec->step;
		}
		json_object_begin(j, NULL);
		if (bounded_lo)
			json_uint(j, low, lo);
		if (bounded_hi)
			json_uint(j, high, hi);
		else
			json_null(j, high);
		json_uint(j, "count", slots[i]);
		json_object_end(j);
	}
	json_array_end(j);
}
