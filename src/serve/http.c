/*
 * serve's HTTP endpoint: a small HTTP/1.1 server in serve's single-threaded poll loop
 * (one epoll fd), for the two pages it has. Each connection has a bounded head buffer,
 * a deadline for its request (from its start or its previous answer: a client sending
 * a byte a second is cut at it) and one answer at a time; past --max-connections the
 * listening socket is not polled, so more clients wait in the kernel's queue.
 * Requests are parsed by serve/httpreq.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "serve/accept.h"
#include "serve/expo.h"
#include "serve/http.h"
#include "serve/httpreq.h"
#include "util/error.h"
#include "util/runloop.h"

/* After an answer that closes the connection: what the client still sends is read and
 * dropped for this long (and up to DRAIN_MAX bytes), so that closing with unread input
 * does not reset the connection before the client has read the answer. */
#define DRAIN_NS  (2 * 1000000000ull)
#define DRAIN_MAX (1 << 20)

enum conn_state { CONN_READ, CONN_WRITE, CONN_DRAIN };

struct conn {
	struct conn *next, *prev;
	int fd;
	enum conn_state state;
	uint64_t deadline;      /* ns: the request's (READ), the answer's (WRITE), the drain's */
	char *in;               /* HTTPREQ_HEAD_MAX bytes: a head, and what follows it */
	size_t in_len;
	char head[512];         /* the answer's status line and fields */
	size_t head_len;
	const char *body;
	char *body_owned;       /* freed once sent */
	size_t body_len, sent;  /* sent: of head and body together */
	bool close_after;
	size_t drained;
};

struct http_server {
	int listen_fd, epoll_fd;
	bool listening;         /* the listening socket is in the epoll set */
	char address[128];
	http_metrics_fn metrics;
	void *ctx;
	int timeout_s, max_connections, nconns;
	struct conn conns;      /* list head */
	struct httpreq req;     /* the request being answered (one at a time: one thread) */
	struct http_stats stats;
};

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>dbtap</title></head><body>\n"
	"<h1>dbtap serve</h1>\n<p>PostgreSQL figures from eBPF, for Prometheus: "
	"<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 505: return "HTTP Version Not Supported";
	}
	return "Error";
}

static void epoll_set(struct http_server *h, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	epoll_ctl(h->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Polls the listening socket only while a connection more may be taken. */
static void listen_update(struct http_server *h)
{
	bool want = h->nconns < h->max_connections;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	if (want == h->listening)
		return;
	if (epoll_ctl(h->epoll_fd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, h->listen_fd, &ev) == 0)
		h->listening = want;
}

static void conn_close(struct http_server *h, struct conn *c)
{
	c->prev->next = c->next;
	c->next->prev = c->prev;
	close(c->fd); /* also takes it out of the epoll set */
	free(c->in);
	free(c->body_owned);
	free(c);
	h->nconns--;
	listen_update(h);
}

/* The answer's head: status line, type, length, Date, and what the connection does next. */
static void answer(struct conn *c, int status, const char *type, const char *body, size_t len,
		   char *owned, bool head_only, int minor)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
	c->head_len = (size_t)snprintf(c->head, sizeof(c->head),
		"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nDate: %s\r\n%s%s\r\n",
		status, reason(status), type, len, date,
		status == 405 ? "Allow: GET, HEAD\r\n" : "",
		c->close_after ? "Connection: close\r\n" : minor == 0 ? "Connection: keep-alive\r\n" : "");
	if (head_only) {
		free(owned);
		body = owned = NULL;
		len = 0;
	}
	c->body = body;
	c->body_owned = owned;
	c->body_len = len;
	c->sent = 0;
	c->state = CONN_WRITE;
}

static void answer_text(struct conn *c, int status, const char *text)
{
	c->close_after = true;
	answer(c, status, "text/plain; charset=utf-8", text, strlen(text), NULL, false, 1);
}

/* The request in c->in (n bytes of head) answered: into c's answer. */
static void serve_request(struct http_server *h, struct conn *c)
{
	const struct httpreq *r = &h->req;
	const char *path = c->in + r->path_off;
	size_t plen = r->path_len;
	bool head_only = r->method == HTTPREQ_HEAD;

	/* a body is not read: the connection ends after the answer */
	c->close_after = !r->keep_alive || r->has_body;
	if (r->method == HTTPREQ_OTHER) {
		static const char bm[] = "method not allowed: GET or HEAD\n";
		h->stats.bad_method++;
		c->close_after = true; /* whatever body it has is not read */
		answer(c, 405, "text/plain; charset=utf-8", bm, sizeof(bm) - 1, NULL, false, r->minor);
	} else if (plen == 8 && !memcmp(path, "/metrics", 8)) {
		bool om = accept_wants_openmetrics(r->has_accept ? r->accept : NULL);
		struct strbuf sb = STRBUF_INIT;

		h->stats.metrics++;
		h->metrics(h->ctx, om, &sb);
		size_t len = sb.len;
		char *body = strbuf_detach(&sb);
		answer(c, 200, om ? EXPO_OM_TYPE : EXPO_TEXT_TYPE, body, len, body, head_only, r->minor);
	} else if (plen == 0 || (plen == 1 && path[0] == '/')) {
		h->stats.index++;
		answer(c, 200, "text/html; charset=utf-8", index_page, sizeof(index_page) - 1, NULL,
		       head_only, r->minor);
	} else {
		static const char nf[] = "not found: dbtap serves /metrics and /\n";
		h->stats.not_found++;
		answer(c, 404, "text/plain; charset=utf-8", nf, sizeof(nf) - 1, NULL, head_only,
		       r->minor);
	}
}

/* Writes what the socket takes; true once the whole answer is out. */
static bool conn_write(struct conn *c)
{
	while (c->sent < c->head_len + c->body_len) {
		struct iovec iov[2];
		int n = 0;
		if (c->sent < c->head_len)
			iov[n++] = (struct iovec){ c->head + c->sent, c->head_len - c->sent };
		size_t boff = c->sent > c->head_len ? c->sent - c->head_len : 0;
		if (c->body_len > boff)
			iov[n++] = (struct iovec){ (void *)(c->body + boff), c->body_len - boff };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = n };
		ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c->sent += (size_t)w;
	}
	return true;
}

static uint64_t secs_ns(int s)
{
	return (uint64_t)s * 1000000000ull;
}

/*
 * Moves c along: parses what it has read, answers, writes, and takes the next request
 * once an answer is out. false when c was closed.
 */
static bool conn_step(struct http_server *h, struct conn *c)
{
	for (;;) {
		if (c->state == CONN_READ) {
			long n = httpreq_parse(c->in, c->in_len, &h->req);
			if (n == 0)
				return true;
			if (n < 0) {
				h->stats.bad_request++;
				answer_text(c, (int)-n, -n == 431 ? "request head too large\n" :
					    -n == 505 ? "HTTP/1.0 and HTTP/1.1 only\n" :
					    -n == 501 ? "no request body is taken\n" : "bad request\n");
				c->in_len = 0;
			} else {
				serve_request(h, c);
				memmove(c->in, c->in + n, c->in_len - (size_t)n);
				c->in_len -= (size_t)n;
			}
			c->deadline = now_ns() + secs_ns(h->timeout_s);
		}
		if (c->state == CONN_WRITE) {
			if (!conn_write(c)) {
				if (errno != EAGAIN && errno != EWOULDBLOCK) {
					conn_close(h, c);
					return false;
				}
				epoll_set(h, c, EPOLLOUT);
				return true;
			}
			free(c->body_owned);
			c->body_owned = NULL;
			c->body = NULL;
			if (c->close_after) {
				shutdown(c->fd, SHUT_WR);
				c->state = CONN_DRAIN;
				c->deadline = now_ns() + DRAIN_NS;
				epoll_set(h, c, EPOLLIN);
				return true;
			}
			/* the next request's deadline starts with this answer */
			c->state = CONN_READ;
			c->deadline = now_ns() + secs_ns(h->timeout_s);
			epoll_set(h, c, EPOLLIN);
			continue; /* a pipelined request may be in already */
		}
		return true;
	}
}

static void conn_input(struct http_server *h, struct conn *c)
{
	if (c->state == CONN_DRAIN) {
		char buf[4096];
		ssize_t r = read(c->fd, buf, sizeof(buf));
		if (r > 0)
			c->drained += (size_t)r;
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) || c->drained > DRAIN_MAX)
			conn_close(h, c);
		return;
	}
	if (c->state != CONN_READ)
		return;
	/* a full buffer is not read on: the parser refuses it (431) */
	if (c->in_len < HTTPREQ_HEAD_MAX) {
		ssize_t r = read(c->fd, c->in + c->in_len, HTTPREQ_HEAD_MAX - c->in_len);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			conn_close(h, c); /* the client is gone, or closed before a full request */
			return;
		}
		c->in_len += (size_t)r;
	}
	conn_step(h, c);
}

static void accept_some(struct http_server *h)
{
	while (h->nconns < h->max_connections) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* EAGAIN; or EMFILE and kin: the client waits in the queue */
		}
		struct conn *c = calloc(1, sizeof(*c));
		char *in = malloc(HTTPREQ_HEAD_MAX);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (!c || !in || epoll_ctl(h->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			free(c);
			free(in);
			close(fd);
			break;
		}
		c->fd = fd;
		c->in = in;
		c->state = CONN_READ;
		c->deadline = now_ns() + secs_ns(h->timeout_s);
		c->next = h->conns.next;
		c->prev = &h->conns;
		h->conns.next->prev = c;
		h->conns.next = c;
		h->nconns++;
		h->stats.connections++;
	}
	listen_update(h);
}

void http_server_run(struct http_server *h)
{
	struct epoll_event ev[32];
	int n = epoll_wait(h->epoll_fd, ev, 32, 0);

	for (int i = 0; i < n; i++) {
		struct conn *c = ev[i].data.ptr;
		if (!c) {
			accept_some(h);
			continue;
		}
		/* one event per fd in a batch, and handling one never closes another: c is live */
		if (c->state == CONN_WRITE)
			conn_step(h, c);
		else if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			conn_input(h, c);
	}
}

void http_server_tick(struct http_server *h)
{
	uint64_t now = now_ns();

	for (struct conn *c = h->conns.next, *next; c != &h->conns; c = next) {
		next = c->next;
		if (now < c->deadline)
			continue;
		/* a request not in, or an answer not taken, in time; a drain just ends */
		if (c->state != CONN_DRAIN)
			h->stats.cut++;
		conn_close(h, c);
	}
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
	h->metrics = o->metrics;
	h->ctx = o->ctx;
	h->timeout_s = o->timeout_s;
	h->max_connections = o->max_connections;
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
	h->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (h->epoll_fd < 0) {
		error_errno("cannot make an epoll instance for the HTTP server on %s", h->address);
		hint("the process may be out of file descriptors: see ulimit -n");
		close(h->listen_fd);
		free(h);
		return NULL;
	}
	listen_update(h);
	return h;
}

const char *http_server_address(const struct http_server *h)
{
	return h->address;
}

int http_server_fd(const struct http_server *h)
{
	return h->epoll_fd;
}

int http_server_timeout_ms(struct http_server *h)
{
	return -1; /* deadlines are kept by http_server_tick(), once a second */
}

const struct http_stats *http_server_stats(const struct http_server *h)
{
	return &h->stats;
}

void http_server_close(struct http_server *h)
{
	if (!h)
		return;
	while (h->conns.next != &h->conns)
		conn_close(h, h->conns.next);
	close(h->epoll_fd);
	close(h->listen_fd);
	free(h);
}
