/* Parses an HTTP Accept header just enough to choose OpenMetrics or the text format. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/accept.h"

/* The first ch in [s, end), NULL when none. */
static const char *find(const char *s, const char *end, char ch)
{
	for (; s < end; s++)
		if (*s == ch)
			return s;
	return NULL;
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* A q-value "0", "0.5", "1.000": thousandths, or -1 when malformed. */
static int parse_q(const char *s, const char *end)
{
	int q = 0, digits = 0;

	if (s >= end || (*s != '0' && *s != '1'))
		return -1;
	q = (*s++ - '0') * 1000;
	if (s < end && *s == '.') {
		s++;
		for (int scale = 100; s < end && isdigit((unsigned char)*s) && digits < 3; s++, digits++,
		     scale /= 10)
			q += (*s - '0') * scale;
	}
	return s == end && q <= 1000 ? q : -1;
}

static bool word_is(const char *s, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - s) == n && !strncasecmp(s, w, n);
}

bool accept_wants_openmetrics(const char *accept)
{
	int best_om = -1, best_text = -1;

	if (!accept)
		return false;
	for (const char *p = accept; *p;) {
		const char *item_end = strchr(p, ',');
		if (!item_end)
			item_end = p + strlen(p);
		/* media range: type/subtype, then ;name=value parameters */
		const char *s = skip_ws(p, item_end);
		const char *semi = find(s, item_end, ';');
		const char *range_end = semi ? semi : item_end;
		while (range_end > s && (range_end[-1] == ' ' || range_end[-1] == '\t'))
			range_end--;
		int q = 1000;
		bool version_ok = true;
		for (const char *a = semi; a && a < item_end;) {
			const char *next = find(a + 1, item_end, ';');
			const char *pend = next ? next : item_end;
			const char *name = skip_ws(a + 1, pend);
			const char *eq = find(name, pend, '=');
			if (eq) {
				const char *v = skip_ws(eq + 1, pend), *vend = pend;
				while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
					vend--;
				const char *nend = eq;
				while (nend > name && (nend[-1] == ' ' || nend[-1] == '\t'))
					nend--;
				if (word_is(name, nend, "q"))
					q = parse_q(v, vend);
				else if (word_is(name, nend, "version"))
					version_ok = word_is(v, vend, "1.0.0");
			}
			a = next;
		}
		if (q > 0) {
			if (word_is(s, range_end, "application/openmetrics-text") && version_ok) {
				if (q > best_om)
					best_om = q;
			} else if (word_is(s, range_end, "text/plain") || word_is(s, range_end, "text/*") ||
				   word_is(s, range_end, "*/*")) {
				if (q > best_text)
					best_text = q;
			}
		}
		p = *item_end ? item_end + 1 : item_end;
	}
	return best_om > 0 && best_om >= best_text;
}
