/* Writes metric families in the Prometheus text format or OpenMetrics, escaping labels. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/loglinear.h"
#include "serve/expo.h"

void expo_init(struct expo *e, struct strbuf *out, bool openmetrics)
{
	memset(e, 0, sizeof(*e));
	e->out = out;
	e->om = openmetrics;
}

static void add_escaped(struct strbuf *sb, const char *s, bool quote)
{
	const char *special = quote ? "\\\n\"" : "\\\n";

	for (;;) {
		size_t n = strcspn(s, special);
		strbuf_add(sb, s, n);
		s += n;
		if (!*s)
			return;
		strbuf_addstr(sb, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\");
		s++;
	}
}

static const char *const type_names[] = { "counter", "gauge", "histogram", "summary" };

void expo_family(struct expo *e, const char *name, enum expo_type type, const char *unit,
		 const char *help)
{
	snprintf(e->family, sizeof(e->family), "%s", name);
	e->type = type;
	/* The text format names a counter family after its samples, OpenMetrics without _total. */
	const char *suffix = type == EXPO_COUNTER && !e->om ? "_total" : "";

	strbuf_addf(e->out, "# HELP %s%s ", name, suffix);
	add_escaped(e->out, help, false);
	strbuf_addf(e->out, "\n# TYPE %s%s %s\n", name, suffix, type_names[type]);
	if (unit && e->om)
		strbuf_addf(e->out, "# UNIT %s %s\n", name, unit);
}

static void sample_start(struct expo *e, const char *suffix, const struct expo_label *l, int nl,
			 const char *le)
{
	strbuf_addstr(e->out, e->family);
	strbuf_addstr(e->out, suffix);
	if (nl || le) {
		strbuf_addch(e->out, '{');
		for (int i = 0; i < nl; i++) {
			if (i)
				strbuf_addch(e->out, ',');
			strbuf_addstr(e->out, l[i].name);
			strbuf_addstr(e->out, "=\"");
			add_escaped(e->out, l[i].value, true);
			strbuf_addch(e->out, '"');
		}
		if (le) {
			strbuf_addstr(e->out, nl ? ",le=\"" : "le=\"");
			strbuf_addstr(e->out, le);
			strbuf_addch(e->out, '"');
		}
		strbuf_addch(e->out, '}');
	}
	strbuf_addch(e->out, ' ');
}

static void add_double(struct strbuf *sb, double v)
{
	if (isnan(v))
		strbuf_addstr(sb, "NaN");
	else if (isinf(v))
		strbuf_addstr(sb, v > 0 ? "+Inf" : "-Inf");
	else {
		/* the shortest text that reads back as v */
		char buf[32];
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		strbuf_addstr(sb, buf);
	}
}

void expo_u64(struct expo *e, const struct expo_label *l, int nl, uint64_t v)
{
	sample_start(e, e->type == EXPO_COUNTER ? "_total" : "", l, nl, NULL);
	strbuf_addf(e->out, "%" PRIu64 "\n", v);
	e->series++;
}

void expo_double(struct expo *e, const struct expo_label *l, int nl, double v)
{
	sample_start(e, e->type == EXPO_COUNTER ? "_total" : "", l, nl, NULL);
	add_double(e->out, v);
	strbuf_addch(e->out, '\n');
	e->series++;
}

/* Seconds from nanoseconds, exactly: integer part and nine decimals, no rounding. */
static void add_seconds(struct strbuf *sb, uint64_t ns)
{
	strbuf_addf(sb, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

void expo_seconds(struct expo *e, const struct expo_label *l, int nl, uint64_t ns)
{
	sample_start(e, e->type == EXPO_COUNTER ? "_total" : "", l, nl, NULL);
	add_seconds(e->out, ns);
	strbuf_addch(e->out, '\n');
	e->series++;
}

void expo_histogram_slots(struct expo *e, const struct expo_label *l, int nl,
			  const struct expo_buckets *b, const uint64_t *slot, uint64_t sum_ns)
{
	uint64_t cum = 0;
	char le[48];
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < b->n; k++) {
		cum += slot[k];
		strbuf_reset(&sb);
		add_seconds(&sb, b->ns[k]);
		snprintf(le, sizeof(le), "%s", sb.buf);
		sample_start(e, "_bucket", l, nl, le);
		strbuf_addf(e->out, "%" PRIu64 "\n", cum);
	}
	cum += slot[b->n];
	sample_start(e, "_bucket", l, nl, "+Inf");
	strbuf_addf(e->out, "%" PRIu64 "\n", cum);
	sample_start(e, "_count", l, nl, NULL);
	strbuf_addf(e->out, "%" PRIu64 "\n", cum);
	sample_start(e, "_sum", l, nl, NULL);
	add_seconds(e->out, sum_ns);
	strbuf_addch(e->out, '\n');
	strbuf_release(&sb);
	e->series += b->n + 3;
}

void expo_histogram(struct expo *e, const struct expo_label *l, int nl,
		    const struct expo_buckets *b, const uint64_t *ll, uint64_t sum_ns)
{
	uint64_t slot[65] = { 0 };
	uint32_t i = 0;

	for (int k = 0; k < b->n && k < 64; k++)
		/* A bucket of the kernel's holds [lower, lower + width): all below the bound. */
		for (; i < b->index[k] && i < LL_BUCKETS; i++)
			slot[k] += ll[i];
	for (; i < LL_BUCKETS; i++)
		slot[b->n] += ll[i];
	expo_histogram_slots(e, l, nl, b, slot, sum_ns);
}

void expo_summary(struct expo *e, const struct expo_label *l, int nl, uint64_t count,
		  uint64_t sum_ns)
{
	sample_start(e, "_count", l, nl, NULL);
	strbuf_addf(e->out, "%" PRIu64 "\n", count);
	sample_start(e, "_sum", l, nl, NULL);
	add_seconds(e->out, sum_ns);
	strbuf_addch(e->out, '\n');
	e->series += 2;
}

void expo_finish(struct expo *e)
{
	if (e->om)
		strbuf_addstr(e->out, "# EOF\n");
}

/* Length of the UTF-8 sequence at s (1-4), 0 when it is not a valid one. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

void expo_clean_value(const char *in, char *out, size_t max)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;

	if (!max)
		return;
	while (*s) {
		size_t n = utf8_len(s);
		if (!n) {
			if (o + 1 >= max)
				break;
			out[o++] = '?';
			s++;
			continue;
		}
		if (o + n >= max)
			break;
		if (n == 1 && (*s < 0x20 || *s == 0x7f))
			out[o++] = ' ';
		else
			memcpy(out + o, s, n), o += n;
		s += n;
	}
	out[o] = '\0';
}
