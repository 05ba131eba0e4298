/* Parsing and testing the recorder's trigger conditions ("p99>50ms for 3s"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/trigger.h"
#include "util/error.h"

static const struct {
	const char *name;
	enum trig_metric m;
} metrics[] = {
	/* longer names first: "tps-drop" before "tps", "stmt-p99" before "p99" */
	{ "stmt-p50", TRIG_STMT_P50 }, { "stmt-p90", TRIG_STMT_P90 }, { "stmt-p99", TRIG_STMT_P99 },
	{ "stmt-max", TRIG_STMT_MAX }, { "txn-p50", TRIG_TXN_P50 }, { "txn-p90", TRIG_TXN_P90 },
	{ "txn-p99", TRIG_TXN_P99 }, { "txn-max", TRIG_TXN_MAX }, { "tps-drop", TRIG_TPS_DROP },
	{ "p50", TRIG_TXN_P50 }, { "p90", TRIG_TXN_P90 }, { "p99", TRIG_TXN_P99 },
	{ "max", TRIG_TXN_MAX }, { "tps", TRIG_TPS }, { "cpu", TRIG_CPU },
};

static const char *const canonical[TRIG_METRICS] = {
	"p50", "p90", "p99", "max", "stmt-p50", "stmt-p90", "stmt-p99", "stmt-max",
	"tps", "tps-drop", "cpu",
};

const char *trigger_metric_name(enum trig_metric m)
{
	return m < TRIG_METRICS ? canonical[m] : "?";
}

bool trigger_is_latency(enum trig_metric m)
{
	return m <= TRIG_STMT_MAX;
}

static const char *skip(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int bad(const char *s, const char *why, const char *h)
{
	error("bad trigger '%s': %s", s, why);
	hint("%s", h);
	return -1;
}

#define TRIG_HINT "METRIC OP VALUE [for SECS]: p99>50ms for 3s, stmt-p90>10ms, tps<500, " \
		  "tps-drop>50%%, cpu>80%% for 5s"

/* A decimal number, an exponent allowed (no sign, no hex, no inf/nan). */
static int number(const char **pp, double *v)
{
	const char *p = *pp, *start = p;
	char buf[32];

	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (p == start || (p - start == 1 && *start == '.'))
		return -1;
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
		p += 2;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (p - start >= (long)sizeof(buf))
		return -1;
	memcpy(buf, start, p - start);
	buf[p - start] = '\0';
	errno = 0;
	*v = strtod(buf, NULL);
	if (errno || !isfinite(*v))
		return -1;
	*pp = p;
	return 0;
}

int trigger_parse(const char *s, struct trigger *t)
{
	const char *p = skip(s);
	size_t i, l;
	double v, scale = 1;

	memset(t, 0, sizeof(*t));
	l = strlen(p);
	while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
		l--;
	if (l == 0)
		return bad(s, "empty", TRIG_HINT);
	if (l >= sizeof(t->text))
		return bad(s, "too long", TRIG_HINT);
	memcpy(t->text, p, l);
	t->text[l] = '\0';
	for (i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (!strncmp(p, metrics[i].name, strlen(metrics[i].name)))
			break;
	if (i == sizeof(metrics) / sizeof(metrics[0]))
		return bad(s, "unknown metric", "metrics: p50 p90 p99 max (transaction latency), "
			   "stmt-p50 stmt-p90 stmt-p99 stmt-max, tps, tps-drop, cpu");
	t->metric = metrics[i].m;
	p = skip(p + strlen(metrics[i].name));
	if (p[0] == '>' || p[0] == '<') {
		bool eq = p[1] == '=';
		t->op = p[0] == '>' ? (eq ? TRIG_GE : TRIG_GT) : (eq ? TRIG_LE : TRIG_LT);
		p = skip(p + 1 + eq);
	} else {
		return bad(s, "no comparison after the metric", TRIG_HINT);
	}
	if (number(&p, &v) < 0)
		return bad(s, "no number after the comparison", TRIG_HINT);
	if (trigger_is_latency(t->metric)) {
		if (!strncmp(p, "us", 2))
			scale = 1, p += 2;
		else if (!strncmp(p, "ms", 2))
			scale = 1e3, p += 2;
		else if (*p == 's' && !isalpha((unsigned char)p[1]))
			scale = 1e6, p += 1;
		else
			return bad(s, "a latency needs its unit", "us, ms or s: p99>50ms");
	} else if (t->metric == TRIG_TPS_DROP || t->metric == TRIG_CPU) {
		if (*p == '%')
			p++;
		if (v > 100)
			return bad(s, "a share over 100%", "tps-drop and cpu are per cent: cpu>80%");
	}
	t->value = v * scale;
	if (!isfinite(t->value) || t->value > 1e12)
		return bad(s, "the value is out of range", TRIG_HINT);
	p = skip(p);
	if (!strncmp(p, "for", 3) && (p[3] == ' ' || p[3] == '\t')) {
		double d;
		p = skip(p + 3);
		if (number(&p, &d) < 0)
			return bad(s, "no duration after 'for'", "for 3s, for 500ms");
		if (!strncmp(p, "ms", 2))
			d /= 1e3, p += 2;
		else if (*p == 's')
			p++;
		if (d > 3600)
			return bad(s, "'for' is over an hour", "for SECS: from 0 to 3600 seconds");
		t->for_s = d;
		p = skip(p);
	}
	if (*p)
		return bad(s, "unexpected text at the end", TRIG_HINT);
	return 0;
}

void trigger_format(const struct trigger *t, char *buf, size_t len)
{
	static const char *const ops[] = { ">", ">=", "<", "<=" };
	const char *unit = trigger_is_latency(t->metric) ? "us" :
			   t->metric == TRIG_TPS_DROP || t->metric == TRIG_CPU ? "%" : "";
	int n = snprintf(buf, len, "%s%s%.17g%s", trigger_metric_name(t->metric), ops[t->op],
			 t->value, unit);

	if (t->for_s > 0 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " for %.17gs", t->for_s);
}

bool trigger_holds(const struct trigger *t, double v)
{
	if (isnan(v))
		return false;
	switch (t->op) {
	case TRIG_GT: return v > t->value;
	case TRIG_GE: return v >= t->value;
	case TRIG_LT: return v < t->value;
	case TRIG_LE: return v <= t->value;
	}
	return false;
}
