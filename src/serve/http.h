/* The HTTP side of serve: a small HTTP/1.1 server in serve's own poll loop, two pages. */
#ifndef DBTAP_SERVE_HTTP_H
#define DBTAP_SERVE_HTTP_H

#include <stdbool.h>

#include "util/strbuf.h"

/* Writes the metrics into out (empty on entry); openmetrics as negotiated. */
typedef void (*http_metrics_fn)(void *ctx, bool openmetrics, struct strbuf *out);

struct http_opts {
	const char *listen;      /* HOST:PORT, [V6]:PORT or :PORT (every address) */
	int max_connections;     /* at once; more wait in the kernel's listen queue */
	int timeout_s;           /* a request not in this long after the connection (or the
	                            previous answer) is cut, however slowly it trickles in */
	http_metrics_fn metrics;
	void *ctx;
};

struct http_server;

/* Binds and listens; NULL with an error naming the address and a hint. */
struct http_server *http_server_open(const struct http_opts *o);
/* The address bound, "127.0.0.1:9187" (the port filled in when :0 was asked). */
const char *http_server_address(const struct http_server *h);
/* An fd to poll for input, and how long until the server must run anyway (ms, -1). */
int http_server_fd(const struct http_server *h);
int http_server_timeout_ms(struct http_server *h);
/* Serves whatever is ready, without blocking. */
void http_server_run(struct http_server *h);
/* Once a second: cuts connections past their request deadline. */
void http_server_tick(struct http_server *h);
/* Requests answered, by outcome, for dbtap's own metrics. */
struct http_stats {
	unsigned long long metrics, index, not_found, bad_method;
	unsigned long long bad_request; /* malformed, too large, not HTTP/1.x: 400, 431, 501, 505 */
	unsigned long long connections, cut; /* accepted; cut at the request deadline */
};
const struct http_stats *http_server_stats(const struct http_server *h);
void http_server_close(struct http_server *h);

/* Splits HOST:PORT ("[::1]:9187", ":9187" for all addresses); 0 or -1. Unit-tested. */
int http_split_listen(const char *listen, char *host, int hostlen, char *port, int portlen);

#endif
