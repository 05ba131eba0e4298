/* Parses the head of an HTTP/1.x request (request line and header fields) from the network. */
#ifndef DBTAP_SERVE_HTTPREQ_H
#define DBTAP_SERVE_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The largest head accepted, request line and header fields together: a scrape's is a
 * few hundred bytes. Larger ones get 431 (Request Header Fields Too Large).
 */
#define HTTPREQ_HEAD_MAX 8192

enum httpreq_method { HTTPREQ_GET, HTTPREQ_HEAD, HTTPREQ_OTHER };

struct httpreq {
	enum httpreq_method method;
	int minor;               /* HTTP/1.minor: 0 or 1 */
	bool keep_alive;         /* the connection may carry another request after this one */
	bool has_body;           /* a Content-Length above 0 */
	/* the path of the target, up to its query: offset and length in the buffer parsed */
	size_t path_off, path_len;
	bool has_accept;
	/* every Accept field's value, joined with ", ", NUL-terminated */
	char accept[HTTPREQ_HEAD_MAX];
};

/*
 * Parses the head at the start of buf (len bytes, not NUL-terminated, may hold the
 * next request's bytes too). Returns the head's length once its empty line is in;
 * 0 while it is incomplete and can still be a valid head; or the negated status of
 * the answer when it cannot: -400 (malformed), -431 (longer than HTTPREQ_HEAD_MAX),
 * -501 (a Transfer-Encoding), -505 (not HTTP/1.x). Any input is safe (tests/fuzz).
 * A head that is complete in buf is also complete, at the same length, in any longer
 * buf it starts; every shorter prefix of it gives 0.
 */
long httpreq_parse(const char *buf, size_t len, struct httpreq *r);

#endif
