/*
 * serve's HTTP endpoint on libmicrohttpd: a well-kept parser with connection limits,
 * per-connection memory caps and idle timeouts, run from serve's single-threaded poll
 * loop (MHD_USE_EPOLL without a thread of its own), so scrapes never race the loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/accept.h"
#include "serve/expo.h"
#include "serve/http.h"
#include "util/dynlib.h"
#include "util/error.h"
#include "util/runloop.h"

/*
 * A connection, for the request deadline: libmicrohttpd's timeout is one of
 * inactivity, which a client sending a byte a second never reaches.
 */
struct conn {
	struct conn *next, *prev;
	int fd;
	uint64_t since; /* accepted, or its previous request answered */
	bool busy;      /* a request's headers are in: it is being answered */
};

struct http_server {
	struct MHD_Daemon *d;
	int listen_fd;
	char address[128];
	http_metrics_fn metrics;
	void *ctx;
	int timeout_s;
	struct conn conns; /* list head */
	struct http_stats stats;
};

/*
 * libmicrohttpd, loaded when serve opens its endpoint (util/dynlib.c): linked in, it
 * and the gnutls it depends on would load into every command.
 */
static struct dynlib libmhd = {
	.soname = "libmicrohttpd.so.12", .needed_for = "serve's HTTP endpoint",
	.package = "libmicrohttpd12",
};
static struct {
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;

static int mhd_load(void)
{
	const struct dynlib_sym syms[] = {
		{ "MHD_get_connection_info", &mhd.get_connection_info },
		{ "MHD_create_response_from_buffer", &mhd.create_response_from_buffer },
		{ "MHD_add_response_header", &mhd.add_response_header },
		{ "MHD_queue_response", &mhd.queue_response },
		{ "MHD_destroy_response", &mhd.destroy_response },
		{ "MHD_lookup_connection_value", &mhd.lookup_connection_value },
		{ "MHD_start_daemon", &mhd.start_daemon },
		{ "MHD_get_daemon_info", &mhd.get_daemon_info },
		{ "MHD_get_timeout", &mhd.get_timeout },
		{ "MHD_run", &mhd.run },
		{ "MHD_stop_daemon", &mhd.stop_daemon },
	};

	return dynlib_load(&libmhd, syms, sizeof(syms) / sizeof(syms[0]), 0);
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *h = cls;
	struct conn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		c = calloc(1, sizeof(*c));
		if (!c || !i) {
			free(c);
			return;
		}
		c->fd = i->connect_fd;
		c->since = now_ns();
		c->next = h->conns.next;
		c->prev = &h->conns;
		h->conns.next->prev = c;
		h->conns.next = c;
		*socket_context = c;
		h->stats.connections++;
	} else if (c) {
		c->prev->next = c->next;
		c->next->prev = c->prev;
		free(c);
		*socket_context = NULL;
	}
}

static struct conn *conn_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *i =
		mhd.get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn *c = conn_of(connection);

	if (c) {
		c->busy = false;
		c->since = now_ns();
	}
}

void http_server_tick(struct http_server *h)
{
	uint64_t now = now_ns(), limit = (uint64_t)h->timeout_s * 1000000000ull;

	for (struct conn *c = h->conns.next; c != &h->conns; c = c->next) {
		if (c->busy || now - c->since < limit)
			continue;
		/* libmicrohttpd owns the fd: shut it down, it sees the end and closes it */
		shutdown(c->fd, SHUT_RDWR);
		c->since = now;
		h->stats.cut++;
	}
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>dbtap</title></head><body>\n"
	"<h1>dbtap serve</h1>\n<p>PostgreSQL figures from eBPF, for Prometheus: "
	"<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *h = cls;
	struct conn *c = conn_of(conn);
	static char not_found[] = "not found: dbtap serves /metrics and /\n";
	static char bad_method[] = "method not allowed: GET or HEAD\n";

	if (c)
		c->busy = true;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		h->stats.bad_method++;
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			     bad_method, strlen(bad_method), MHD_RESPMEM_PERSISTENT);
	}
	/* A GET with a body: let libmicrohttpd read it (and drop it) before answering. */
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics")) {
		const char *accept = mhd.lookup_connection_value(conn, MHD_HEADER_KIND,
								 MHD_HTTP_HEADER_ACCEPT);
		bool om = accept_wants_openmetrics(accept);
		struct strbuf sb = STRBUF_INIT;

		h->stats.metrics++;
		h->metrics(h->ctx, om, &sb);
		size_t len = sb.len;
		char *body = strbuf_detach(&sb);
		return reply(conn, MHD_HTTP_OK, om ? EXPO_OM_TYPE : EXPO_TEXT_TYPE, body, len,
			     MHD_RESPMEM_MUST_FREE);
	}
	if (!strcmp(url, "/")) {
		h->stats.index++;
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)index_page,
			     strlen(index_page), MHD_RESPMEM_PERSISTENT);
	}
	h->stats.not_found++;
	return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
		     strlen(not_found), MHD_RESPMEM_PERSISTENT);
}

int http_split_listen(const char *listen, char *host, int hostlen, char *port, int portlen)
{
	const char *colon;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return -1;
		snprintf(host, hostlen, "%.*s", (int)(close - listen - 1), listen + 1);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon || memchr(listen, ':', colon - listen))
			return -1; /* a bare IPv6 address needs brackets */
		snprintf(host, hostlen, "%.*s", (int)(colon - listen), listen);
	}
	const char *p = colon + 1;
	if (!*p || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p) || atoi(p) > 65535)
		return -1;
	snprintf(port, portlen, "%s", p);
	return 0;
}

static int bind_listen(const char *spec, char *address, size_t alen, bool *all)
{
	char host[256], port[8], hbuf[NI_MAXHOST], pbuf[NI_MAXSERV];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai, *a;
	int fd = -1, err, one = 1;

	if (http_split_listen(spec, host, sizeof(host), port, sizeof(port)) < 0) {
		error("bad --listen '%s'", spec);
		hint("HOST:PORT, e.g. 127.0.0.1:9187, [::1]:9187, or :9187 for every address");
		return -1;
	}
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (err) {
		error("cannot resolve --listen '%s': %s", spec, gai_strerror(err));
		hint("give an address this host has, e.g. 127.0.0.1:9187");
		return -1;
	}
	/* With no host, prefer IPv6's wildcard: it takes IPv4 too unless v6only is set. */
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		error_errno("cannot listen on '%s'", spec);
		hint(errno == EADDRINUSE ? "another program listens there: choose another port with"
		     " --listen" : "check the address with 'ip addr'; ports below 1024 need root");
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	getnameinfo((struct sockaddr *)&ss, sl, hbuf, sizeof(hbuf), pbuf, sizeof(pbuf),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(address, alen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", hbuf, pbuf);
	if (ss.ss_family == AF_INET)
		*all = ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	else
		*all = !memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr, &in6addr_any,
			       sizeof(in6addr_any));
	return fd;
}

struct http_server *http_server_open(const struct http_opts *o)
{
	struct http_server *h = calloc(1, sizeof(*h));
	bool all = false;

	if (!h)
		return NULL;
	if (mhd_load()) {
		free(h);
		return NULL;
	}
	h->metrics = o->metrics;
	h->ctx = o->ctx;
	h->timeout_s = o->timeout_s;
	h->conns.next = h->conns.prev = &h->conns;
	h->listen_fd = bind_listen(o->listen, h->address, sizeof(h->address), &all);
	if (h->listen_fd < 0) {
		free(h);
		return NULL;
	}
	if (all)
		warning("listening on every address (%s): anyone who can reach this host can read"
			" its statements' shapes and rates; prefer --listen 127.0.0.1:PORT behind a"
			" proxy, or a firewall", h->address);
	h->d = mhd.start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->timeout_s,
				/* request line and headers of a scrape fit in a few hundred bytes */
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_END);
	if (!h->d) {
		error("cannot start the HTTP server on %s", h->address);
		hint("libmicrohttpd needs epoll; 'dbtap -v serve' says more");
		close(h->listen_fd);
		free(h);
		return NULL;
	}
	return h;
}

const char *http_server_address(const struct http_server *h)
{
	return h->address;
}

int http_server_fd(const struct http_server *h)
{
	const union MHD_DaemonInfo *i = mhd.get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);

	return i ? i->epoll_fd : -1;
}

int http_server_timeout_ms(struct http_server *h)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (mhd.get_timeout(h->d, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

void http_server_run(struct http_server *h)
{
	mhd.run(h->d);
}

const struct http_stats *http_server_stats(const struct http_server *h)
{
	return &h->stats;
}

void http_server_close(struct http_server *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->d);
	close(h->listen_fd);
	free(h);
}
