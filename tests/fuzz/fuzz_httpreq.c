/* Fuzz target: the head of an HTTP request to dbtap serve, which anyone who can connect writes. */
#include "fuzz.h"
#include "serve/httpreq.h"

static struct httpreq r, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* bytes, not a string: a copy of exactly the size, so a read past it is caught */
	char *buf = malloc(size ? size : 1);
	long n;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	n = httpreq_parse(buf, size, &r);
	if (n != 0 && n != -400 && n != -431 && n != -501 && n != -505 &&
	    !(n > 0 && (size_t)n <= size && n <= HTTPREQ_HEAD_MAX))
		abort();
	if (n > 0) {
		/* the path lies inside the head; the joined Accept is a string in its buffer */
		if (r.path_off > (size_t)n || r.path_len > (size_t)n - r.path_off)
			abort();
		if (memchr(buf + r.path_off, '?', r.path_len) || memchr(buf + r.path_off, ' ', r.path_len))
			abort();
		if (strnlen(r.accept, sizeof(r.accept)) == sizeof(r.accept))
			abort();
		if (r.minor != 0 && r.minor != 1)
			abort();
		/* the head alone parses the same: nothing after it was read */
		if (httpreq_parse(buf, (size_t)n, &again) != n || again.method != r.method ||
		    again.keep_alive != r.keep_alive || again.path_off != r.path_off ||
		    again.path_len != r.path_len || strcmp(again.accept, r.accept))
			abort();
		/* and every shorter prefix of it is still incomplete, never refused */
		for (long p = 0; p < n; p += 1 + (n > 64 ? p / 8 : 0))
			if (httpreq_parse(buf, (size_t)p, &again) != 0)
				abort();
		if (httpreq_parse(buf, (size_t)n - 1, &again) != 0)
			abort();
	}
	free(buf);
	return 0;
}
