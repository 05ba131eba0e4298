/*
 * The head of an HTTP/1.x request (RFC 9112), strictly: what a scraper sends is small
 * and regular, so anything unusual is refused rather than guessed at. It reads bytes
 * anyone who can connect writes: every index is checked against len, nothing is
 * written outside struct httpreq.
 */
#include <string.h>
#include <strings.h>

#include "serve/httpreq.h"

/* RFC 9110's tchar: the bytes of a method or a field name. */
static bool is_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	return ch && strchr("!#$%&'*+-.^_`|~", ch);
}

/* A field value's bytes: visible ASCII, obs-text, spaces and tabs; no control byte. */
static bool is_value_byte(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || (ch >= 0x21 && ch != 0x7f);
}

static bool same_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !strncasecmp(s, w, n);
}

/* The request line: METHOD SP TARGET SP HTTP/1.x; 0 or a negated status. */
static long parse_request_line(const char *s, size_t n, const char *buf, struct httpreq *r)
{
	size_t i = 0, m, t0, t1;

	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i == n || s[i] != ' ')
		return -400;
	m = i;
	/* methods are case-sensitive */
	r->method = m == 3 && !strncmp(s, "GET", 3)  ? HTTPREQ_GET :
		    m == 4 && !strncmp(s, "HEAD", 4) ? HTTPREQ_HEAD : HTTPREQ_OTHER;
	t0 = ++i;
	while (i < n && (unsigned char)s[i] >= 0x21 && (unsigned char)s[i] <= 0x7e)
		i++;
	t1 = i;
	if (t1 == t0 || i == n || s[i] != ' ')
		return -400;
	i++;
	/* HTTP-version: "HTTP/" DIGIT "." DIGIT, and the line ends there */
	if (n - i != 8 || strncmp(s + i, "HTTP/", 5) || s[i + 6] != '.' ||
	    s[i + 5] < '0' || s[i + 5] > '9' || s[i + 7] < '0' || s[i + 7] > '9')
		return -400;
	if (s[i + 5] != '1')
		return -505;
	/* a later 1.x is answered as 1.1, the highest this server speaks */
	r->minor = s[i + 7] == '0' ? 0 : 1;

	/* absolute-form (http://host/path): the path is what follows the authority */
	size_t p = t0;
	if (t1 - t0 >= 7 && !strncasecmp(s + t0, "http://", 7)) {
		p = t0 + 7;
		while (p < t1 && s[p] != '/')
			p++;
	}
	size_t q = p;
	while (q < t1 && s[q] != '?')
		q++;
	r->path_off = (size_t)(s + p - buf);
	r->path_len = q - p;
	return 0;
}

struct fields {
	int hosts, lengths;
	unsigned long long length;
	bool close, keep_alive;
};

/* Content-Length: digits only, and every copy of the field the same. */
static long parse_length(const char *v, size_t n, struct fields *f)
{
	unsigned long long x = 0;

	if (n == 0 || n > 18)
		return -400;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -400;
		x = x * 10 + (unsigned)(v[i] - '0');
	}
	if (f->lengths++ && x != f->length)
		return -400;
	f->length = x;
	return 0;
}

/* Connection: a list of tokens; "close" and "keep-alive" are the ones that matter. */
static void parse_connection(const char *v, size_t n, struct fields *f)
{
	size_t i = 0;

	while (i < n) {
		while (i < n && (v[i] == ',' || v[i] == ' ' || v[i] == '\t'))
			i++;
		size_t w = i;
		while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
			i++;
		if (same_word(v + w, i - w, "close"))
			f->close = true;
		else if (same_word(v + w, i - w, "keep-alive"))
			f->keep_alive = true;
	}
}

static long add_accept(const char *v, size_t n, struct httpreq *r)
{
	size_t have = strlen(r->accept), sep = r->has_accept ? 2 : 0;

	if (have + sep + n >= sizeof(r->accept))
		return -431;
	if (sep)
		memcpy(r->accept + have, ", ", 2);
	memcpy(r->accept + have + sep, v, n);
	r->accept[have + sep + n] = '\0';
	r->has_accept = true;
	return 0;
}

/* One header field line (no line end); 0 or a negated status. */
static long parse_field(const char *s, size_t n, struct fields *f, struct httpreq *r)
{
	size_t i = 0;

	/* a line folded onto the previous one (obs-fold) is refused, as RFC 9112 allows */
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i == n || s[i] != ':')
		return -400; /* no name, no colon, or a space before it */
	size_t name_len = i++;
	for (size_t k = i; k < n; k++)
		if (!is_value_byte((unsigned char)s[k]))
			return -400;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t end = n;
	while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		end--;
	const char *v = s + i;
	size_t vn = end - i;

	if (same_word(s, name_len, "host")) {
		if (f->hosts++)
			return -400;
	} else if (same_word(s, name_len, "content-length")) {
		return parse_length(v, vn, f);
	} else if (same_word(s, name_len, "transfer-encoding")) {
		return -501; /* no request of a scraper has a body to frame */
	} else if (same_word(s, name_len, "connection")) {
		parse_connection(v, vn, f);
	} else if (same_word(s, name_len, "accept")) {
		return add_accept(v, vn, r);
	}
	return 0;
}

long httpreq_parse(const char *buf, size_t len, struct httpreq *r)
{
	size_t lim = len < HTTPREQ_HEAD_MAX ? len : HTTPREQ_HEAD_MAX, pos = 0;
	struct fields f = { 0 };
	bool first = true;
	long err;

	memset(r, 0, sizeof(*r));
	for (;;) {
		const char *lf = pos < lim ? memchr(buf + pos, '\n', lim - pos) : NULL;
		if (!lf)
			return len >= HTTPREQ_HEAD_MAX ? -431 : 0;
		const char *s = buf + pos;
		size_t n = (size_t)(lf - s);
		if (n && s[n - 1] == '\r')
			n--;
		pos = (size_t)(lf - buf) + 1;
		if (first) {
			/* empty lines before a request line are skipped (RFC 9112, 2.2) */
			if (n == 0)
				continue;
			err = parse_request_line(s, n, buf, r);
			if (err)
				return err;
			first = false;
			continue;
		}
		if (n == 0)
			break;
		err = parse_field(s, n, &f, r);
		if (err)
			return err;
	}
	/* HTTP/1.1 requires one Host field (RFC 9112, 3.2) */
	if (r->minor == 1 && f.hosts == 0)
		return -400;
	r->keep_alive = !f.close && (r->minor == 1 || f.keep_alive);
	r->has_body = f.length > 0;
	return (long)pos;
}
