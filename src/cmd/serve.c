/* dbtap serve: the figures of tps, latency query and watch for Prometheus, on every host. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "pg/cluster.h"
#include "serve/buckets.h"
#include "serve/expo.h"
#include "serve/http.h"
#include "serve/pgmon.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/privs.h"
#include "util/json.h"
#include "util/runloop.h"

#define MAX_SPECS 32
#define MAX_FAILED 64

struct serve_cmd {
	struct frame f;
	int argc;
	char **argv;
	const char *buckets_text;
	const char *specs[MAX_SPECS];
	int nspecs;
	bool pg_all;
	const char *listen, *textfile, *user;
	double rescan;
	uint64_t next_tick, next_rescan;
	int max_connections, request_timeout;
	bool bpf_stats;
	struct pgmon_opts mo;
	struct expo_buckets buckets;

	struct pgmon **mons;
	int nmons;
	pid_t failed[MAX_FAILED]; /* postmasters that could not be attached: not retried */
	int nfailed;
	int stats_fd;
	struct http_server *http;
	unsigned long long scrapes, attaches, detaches;
	double last_scrape_s;
	uint64_t caps;
};

enum {
	OPT_LISTEN = FRAME_KEY_LONG, OPT_COLLECT, OPT_TEXTFILE, OPT_MAX_SERIES, OPT_BUCKETS,
	OPT_USER, OPT_RESCAN, OPT_MAX_CONN, OPT_NO_STATS, OPT_REQ_TIMEOUT,
};

static const struct frame_opt serve_opts[] = {
	{ "pg", FRAME_KEY_PG, optional_argument, "TARGET",
	  "a cluster: data directory, port or postmaster pid; may be\n"
	  "repeated; alone or not given: every cluster here" },
	{ "listen", OPT_LISTEN, required_argument, "HOST:PORT",
	  "where /metrics is served (default 127.0.0.1:9187; :PORT\n"
	  "for every address, with a warning; port 0: any free one)" },
	{ "collect", OPT_COLLECT, required_argument, "LIST",
	  "tps,latency,watch,stat,wait (default all but wait)" },
	{ "textfile", OPT_TEXTFILE, required_argument, "DIR",
	  "also write DIR/dbtap.prom for node_exporter, atomically" },
	{ "interval", 'i', required_argument, "SECS",
	  "how often the textfile is written (default 15)", FRAME_OPT_TIME },
	FRAME_OPT_DURATION,
	{ "max-series", OPT_MAX_SERIES, required_argument, "N",
	  "label sets and statements per cluster; the rest are\n"
	  "summed into \"other\" (default 100)" },
	{ "buckets", OPT_BUCKETS, required_argument, "LIST",
	  "histogram bounds in seconds (default 0.0001,...,10)" },
	{ "user", OPT_USER, required_argument, "USER", "run as USER once attached" },
	{ "rescan", OPT_RESCAN, required_argument, "SECS",
	  "look for started and stopped clusters every SECS (default\n"
	  "2); 0: never, and keep no capability but CAP_BPF" },
	{ "max-connections", OPT_MAX_CONN, required_argument, "N",
	  "HTTP connections served at once (default 64)" },
	{ "request-timeout", OPT_REQ_TIMEOUT, required_argument, "SECS",
	  "a connection whose request is not in within SECS (from its\n"
	  "start or its previous answer) is closed (default 10)" },
	{ "no-bpf-stats", OPT_NO_STATS, no_argument, NULL,
	  "leave the kernel's BPF run-time statistics off" },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd serve_frame = {
	.name = "serve",
	.about =
		"A Prometheus exporter: attaches once to every PostgreSQL cluster it is given\n"
		"(--pg alone or nothing: every cluster of the host, those started later too),\n"
		"keeps the kernel's aggregates and reads the maps at each scrape of /metrics\n"
		"(Prometheus text format, or OpenMetrics when the scraper asks for it).\n",
	.examples =
		"  dbtap serve                                 every cluster, on 127.0.0.1:9187\n"
		"  dbtap serve --pg /var/lib/postgresql/15/main --user nobody\n"
		"  dbtap serve --textfile /var/lib/prometheus/node-exporter --listen 127.0.0.1:0\n",
	.opts = serve_opts,
};

static int positive_int(const char *arg, const char *opt, int max, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < 1 || v > max) {
		error("bad %s '%s'", opt, arg);
		hint("%s takes a whole number from 1 to %d", opt, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int seconds_opt(const char *arg, const char *opt, bool zero_ok, double *out)
{
	double v = parse_seconds(arg);

	if (v < 0 || (!zero_ok && v == 0)) {
		error("bad %s '%s'", opt, arg);
		hint("%s takes seconds, e.g. 2 or 0.5%s", opt, zero_ok ? " (0: never)" : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int collect_opt(const char *arg, unsigned *out)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", arg);
	*out = 0;
	for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "tps"))
			*out |= COLLECT_TPS;
		else if (!strcmp(w, "latency"))
			*out |= COLLECT_LATENCY;
		else if (!strcmp(w, "watch"))
			*out |= COLLECT_WATCH;
		else if (!strcmp(w, "wait"))
			*out |= COLLECT_WAIT;
		else if (!strcmp(w, "stat"))
			*out |= COLLECT_STAT;
		else {
			error("bad --collect '%s': '%s' is not a collector", arg, w);
			hint("collectors: tps, latency, watch, stat, wait");
			return -1;
		}
	}
	if (!*out) {
		error("bad --collect '%s': no collector", arg);
		hint("e.g. --collect tps,latency,watch");
		return -1;
	}
	return 0;
}

/* A TARGET word: a data directory with PG_VERSION, or a number (port or postmaster pid). */
static int check_spec(const char *spec)
{
	char path[PATH_MAX];
	struct stat st;

	if (spec[0] && strspn(spec, "0123456789") == strlen(spec))
		return 0;
	snprintf(path, sizeof(path), "%s/PG_VERSION", spec);
	if (stat(spec, &st) < 0 || !S_ISDIR(st.st_mode) || access(path, F_OK) < 0) {
		error("'%s' is not a PostgreSQL data directory, port or postmaster pid", spec);
		hint("a data directory holds PG_VERSION; 'dbtap pg' lists the clusters running here");
		return -1;
	}
	return 0;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct serve_cmd *c = ctx;

	switch (key) {
	case FRAME_KEY_PG: {
		/* --pg X as well as --pg=X: a word after a bare --pg that is no option */
		if (!arg && optind < c->argc && c->argv[optind][0] != '-')
			arg = c->argv[optind++];
		if (!arg || !*arg) {
			c->pg_all = true;
			return 0;
		}
		if (c->nspecs == MAX_SPECS) {
			error("more than %d --pg targets", MAX_SPECS);
			hint("--pg alone serves every cluster of the host");
			return -1;
		}
		if (check_spec(arg) < 0)
			return -1;
		c->specs[c->nspecs++] = arg;
		return 0;
	}
	case OPT_LISTEN:
		c->listen = arg;
		return 0;
	case OPT_COLLECT:
		return collect_opt(arg, &c->mo.collect);
	case OPT_TEXTFILE:
		c->textfile = arg;
		return 0;
	case OPT_MAX_SERIES:
		return positive_int(arg, "--max-series", 100000, &c->mo.max_series);
	case OPT_BUCKETS:
		c->buckets_text = arg;
		return 0;
	case OPT_USER:
		c->user = arg;
		return 0;
	case OPT_RESCAN:
		return seconds_opt(arg, "--rescan", true, &c->rescan);
	case OPT_MAX_CONN:
		return positive_int(arg, "--max-connections", 4096, &c->max_connections);
	case OPT_REQ_TIMEOUT:
		return positive_int(arg, "--request-timeout", 3600, &c->request_timeout);
	case OPT_NO_STATS:
		c->bpf_stats = false;
		return 0;
	}
	return -1;
}

static int parse_options(struct serve_cmd *c, int argc, char **argv)
{
	int r;

	c->argc = argc;
	c->argv = argv;
	c->f.time.interval = 15;
	r = frame_parse(&c->f, &serve_frame, argc, argv, on_opt, c);
	if (r)
		return r;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("serve takes options only; a cluster is named with --pg TARGET");
		return EXIT_USAGE;
	}
	if (c->pg_all && c->nspecs) {
		error("--pg alone (every cluster) and --pg TARGET given together");
		hint("give either --pg alone or the clusters to serve");
		return EXIT_USAGE;
	}
	if (c->textfile) {
		struct stat st;
		if (stat(c->textfile, &st) < 0 || !S_ISDIR(st.st_mode)) {
			error("--textfile '%s' is not a directory", c->textfile);
			hint("node_exporter's --collector.textfile.directory, e.g."
			     " /var/lib/prometheus/node-exporter");
			return EXIT_USAGE;
		}
	}
	char host[256], port[8];
	if (http_split_listen(c->listen, host, sizeof(host), port, sizeof(port)) < 0) {
		error("bad --listen '%s'", c->listen);
		hint("HOST:PORT, e.g. 127.0.0.1:9187, [::1]:9187, or :9187 for every address");
		return EXIT_USAGE;
	}
	if (buckets_parse(c->buckets_text ? c->buckets_text : BUCKETS_DEFAULT, &c->buckets) < 0)
		return EXIT_USAGE;
	return 0;
}

/* Whether cluster k is one serve was asked for. */
static bool wanted(const struct serve_cmd *c, const struct pg_cluster *k)
{
	if (!c->nspecs)
		return true;
	for (int i = 0; i < c->nspecs; i++) {
		const char *s = c->specs[i];
		if (strspn(s, "0123456789") == strlen(s)) {
			long v = atol(s);
			if (v == k->postmaster || (k->have_pidfile && v == k->pidfile.port))
				return true;
			continue;
		}
		char a[PATH_MAX], b[PATH_MAX];
		if (k->datadir && realpath(s, a) && realpath(k->datadir, b) && !strcmp(a, b))
			return true;
	}
	return false;
}

static bool monitored(const struct serve_cmd *c, pid_t pm)
{
	for (int i = 0; i < c->nmons; i++)
		if (pgmon_postmaster(c->mons[i]) == pm)
			return true;
	for (int i = 0; i < c->nfailed; i++)
		if (c->failed[i] == pm)
			return true;
	return false;
}

/* Attaches to cluster k (taken over) unless it is served already, failed, or not ready. */
static void consider(struct serve_cmd *c, struct pg_cluster *k)
{
	if (!wanted(c, k) || monitored(c, k->postmaster))
		return;
	/* Not ready yet (recovery, startup): its probes and counters come once it is. */
	if (k->have_pidfile && k->pidfile.status[0] && strcmp(k->pidfile.status, "ready") &&
	    strcmp(k->pidfile.status, "standby"))
		return;
	pid_t pm = k->postmaster;
	struct pgmon *m = pgmon_open(k, &c->mo);
	if (!m) {
		warning("cannot attach to the cluster of postmaster %d; not retried", (int)pm);
		if (c->nfailed < MAX_FAILED)
			c->failed[c->nfailed++] = pm;
		return;
	}
	struct pgmon **v = realloc(c->mons, (c->nmons + 1) * sizeof(*v));
	if (!v) {
		pgmon_close(m);
		return;
	}
	c->mons = v;
	c->mons[c->nmons++] = m;
	c->attaches++;
	fprintf(stderr, "serving cluster %s (postmaster %d)\n", pgmon_label(m), (int)pm);
}

/*
 * Finds clusters started since the last look and attaches to them. Those named by data
 * directory or postmaster pid are read directly; every process of the host is scanned
 * only with no --pg TARGET, or for a port or a cluster not running: the scan was 4-6 ms
 * of serve's start-up on a host running a few clusters.
 */
static void rescan(struct serve_cmd *c)
{
	struct pg_cluster_list list;
	bool scan = c->nspecs == 0;

	for (int i = 0; i < c->nspecs; i++) {
		struct pg_cluster k;
		if (pg_cluster_lookup(c->specs[i], &k) < 0) {
			scan = true;
			continue;
		}
		consider(c, &k);
		pg_cluster_free(&k);
	}
	if (!scan || pg_cluster_discover(&list) < 0)
		return;
	for (int i = 0; i < list.n; i++)
		consider(c, &list.c[i]);
	pg_cluster_list_free(&list);
}

/* Drops clusters whose postmaster has gone, with every series they had. */
static void reap(struct serve_cmd *c)
{
	int w = 0;

	for (int i = 0; i < c->nmons; i++) {
		if (pgmon_alive(c->mons[i])) {
			c->mons[w++] = c->mons[i];
			continue;
		}
		fprintf(stderr, "cluster %s stopped; its series are gone\n", pgmon_label(c->mons[i]));
		pgmon_close(c->mons[i]);
		c->detaches++;
	}
	c->nmons = w;
	/* A failed postmaster that is gone frees its slot: its pid may come back as another. */
	w = 0;
	for (int i = 0; i < c->nfailed; i++)
		if (proc_exists(c->failed[i]))
			c->failed[w++] = c->failed[i];
	c->nfailed = w;
}

static void own_metrics(struct serve_cmd *c, struct expo *e, double read_s)
{
	const struct http_stats *hs = c->http ? http_server_stats(c->http) : NULL;

	expo_family(e, "dbtap_scrape_duration_seconds", EXPO_GAUGE, "seconds",
		    "Time this scrape took to read the maps and format the clusters' series");
	expo_double(e, NULL, 0, read_s);
	expo_family(e, "dbtap_scrapes", EXPO_COUNTER, NULL, "Scrapes of /metrics and textfile writes");
	expo_u64(e, NULL, 0, c->scrapes);
	expo_family(e, "dbtap_clusters", EXPO_GAUGE, NULL, "Clusters served now");
	expo_u64(e, NULL, 0, c->nmons);
	expo_family(e, "dbtap_cluster_attaches", EXPO_COUNTER, NULL,
		    "Clusters attached to since start (started later ones included)");
	expo_u64(e, NULL, 0, c->attaches);
	expo_family(e, "dbtap_cluster_detaches", EXPO_COUNTER, NULL,
		    "Clusters dropped since start because their postmaster stopped");
	expo_u64(e, NULL, 0, c->detaches);
	if (hs) {
		expo_family(e, "dbtap_http_requests", EXPO_COUNTER, NULL, "HTTP requests answered, by page (bad_request: malformed, too large or not HTTP/1.x)");
		struct expo_label l[1] = { { "page", "metrics" } };
		expo_u64(e, l, 1, hs->metrics);
		l[0].value = "index";
		expo_u64(e, l, 1, hs->index);
		l[0].value = "not_found";
		expo_u64(e, l, 1, hs->not_found);
		l[0].value = "bad_method";
		expo_u64(e, l, 1, hs->bad_method);
		l[0].value = "bad_request";
		expo_u64(e, l, 1, hs->bad_request);
		expo_family(e, "dbtap_http_connections", EXPO_COUNTER, NULL, "HTTP connections accepted");
		expo_u64(e, NULL, 0, hs->connections);
		expo_family(e, "dbtap_http_connections_cut", EXPO_COUNTER, NULL,
			    "HTTP connections closed because no full request came within --request-timeout");
		expo_u64(e, NULL, 0, hs->cut);
	}
	expo_family(e, "dbtap_bpf_stats_enabled", EXPO_GAUGE, NULL,
		    "1 when the kernel's BPF run-time statistics are on (dbtap_bpf_run_seconds counts)");
	expo_u64(e, NULL, 0, c->stats_fd >= 0);
	expo_family(e, "dbtap_build_info", EXPO_GAUGE, NULL, "dbtap's version");
	struct expo_label v[1] = { { "version", DBTAP_VERSION } };
	expo_u64(e, v, 1, 1);
}

static void write_metrics(void *ctx, bool openmetrics, struct strbuf *out)
{
	struct serve_cmd *c = ctx;
	uint64_t t0 = now_ns();
	struct expo e;

	expo_init(&e, out, openmetrics);
	c->scrapes++;
	for (int i = 0; i < c->nmons; i++)
		pgmon_read(c->mons[i]);
	for (int f = 0; f < PGF_NFAMILIES; f++) {
		pgmon_family_header(&e, f);
		for (int i = 0; i < c->nmons; i++)
			pgmon_write(c->mons[i], &e, f);
	}
	c->last_scrape_s = (now_ns() - t0) / 1e9;
	own_metrics(c, &e, c->last_scrape_s);
	expo_finish(&e);
}

/* DIR/dbtap.prom, written to a temporary name and renamed: node_exporter never reads half. */
static void write_textfile(struct serve_cmd *c)
{
	struct strbuf sb = STRBUF_INIT;
	char tmp[PATH_MAX], dst[PATH_MAX];

	write_metrics(c, false, &sb);
	snprintf(tmp, sizeof(tmp), "%s/.dbtap.prom.%d", c->textfile, (int)getpid());
	snprintf(dst, sizeof(dst), "%s/dbtap.prom", c->textfile);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0;
	for (size_t off = 0; ok && off < sb.len;) {
		ssize_t n = write(fd, sb.buf + off, sb.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0;
		off += n > 0 ? (size_t)n : 0;
	}
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (!ok || rename(tmp, dst) < 0) {
		warning("cannot write %s: %s", dst, strerror(errno));
		unlink(tmp);
	}
	strbuf_release(&sb);
}

/*
 * The frame's poll, every millisecond: serve's loop. It blocks in poll() on
 * the HTTP server's epoll fd until a request comes, the next second's bookkeeping or the
 * frame's next interval (the textfile) or -d end is due (at most 100 ms, so that
 * signals are seen soon), then serves. Blocking past the interval's end made every
 * textfile write up to 100 ms late, and intervals under 0.1 s as long as 0.1 s.
 */
static bool serve_poll(void *ctx)
{
	struct serve_cmd *c = ctx;
	uint64_t now = now_ns();

	if (now >= c->next_tick) {
		http_server_tick(c->http);
		reap(c);
		for (int i = 0; i < c->nmons; i++)
			pgmon_tick(c->mons[i]);
		c->next_tick = now + 1000000000ull;
	}
	if (c->rescan > 0 && now >= c->next_rescan) {
		rescan(c);
		c->next_rescan = now + (uint64_t)(c->rescan * 1e9);
	}
	now = now_ns();
	int timeout = c->next_tick > now ? (int)((c->next_tick - now) / 1000000 + 1) : 0;
	int ht = http_server_timeout_ms(c->http);
	if (timeout > 100)
		timeout = 100;
	if (ht >= 0 && ht < timeout)
		timeout = ht;
	timeout = runloop_due_ms(&c->f.rl, timeout);
	struct pollfd pfd = { .fd = http_server_fd(c->http), .events = POLLIN };
	poll(&pfd, 1, timeout); /* EINTR: a signal, which the frame sees next */
	http_server_run(c->http);
	return true;
}

/* Intervals (-i) write the textfile; the summary says what was served. */
static void serve_report(void *ctx, const struct frame_report *r)
{
	struct serve_cmd *c = ctx;

	if (r->kind == FRAME_INTERVAL) {
		if (c->textfile)
			write_textfile(c);
		return;
	}
	if (global.json) {
		struct json j;
		json_init(&j);
		frame_json_begin(&j, r);
		json_uint(&j, "scrapes", c->scrapes);
		json_uint(&j, "clusters", c->nmons);
		json_uint(&j, "attaches", c->attaches);
		json_uint(&j, "detaches", c->detaches);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
		return;
	}
	frame_text_head(stdout, r);
	printf("%llu scrapes, %d clusters served, %llu attached, %llu dropped\n", c->scrapes,
	       c->nmons, c->attaches, c->detaches);
}

/* After the summary: detach every cluster, close the server; safe twice. */
static void serve_teardown(void *ctx)
{
	struct serve_cmd *c = ctx;

	for (int i = 0; i < c->nmons; i++)
		pgmon_close(c->mons[i]);
	free(c->mons);
	c->mons = NULL;
	c->nmons = 0;
	http_server_close(c->http);
	c->http = NULL;
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_cmd c = {
		.listen = "127.0.0.1:9187",
		.rescan = 2,
		.max_connections = 64,
		.request_timeout = 10,
		.bpf_stats = true,
		.stats_fd = -1,
		.mo = { .collect = COLLECT_DEFAULT, .max_series = 100 },
	};
	const struct frame_ops ops = {
		.report = serve_report,
		.poll = serve_poll,
		.poll_ms = 1,
		.teardown = serve_teardown,
		.teardown_what = "detaching from the clusters",
	};
	int ret;

	ret = parse_options(&c, argc, argv);
	if (ret)
		return frame_status(ret);
	if (!c.textfile)
		c.f.time.interval = 0; /* no textfile, nothing to do at intervals */
	c.mo.buckets = &c.buckets;
	signal(SIGPIPE, SIG_IGN);

	struct http_opts ho = {
		.listen = c.listen, .max_connections = c.max_connections,
		.timeout_s = c.request_timeout,
		.metrics = write_metrics, .ctx = &c,
	};
	c.http = http_server_open(&ho);
	if (!c.http)
		return EXIT_FAIL;
	if (c.bpf_stats) {
		/* Kept open for as long as serve runs; the kernel turns them off when it closes. */
		c.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c.stats_fd < 0)
			warning("cannot turn on BPF run-time statistics: %s; dbtap_bpf_run_seconds stays"
				" 0", strerror(errno));
	}
	/* Signal handlers before the first attach: SIGTERM while attaching still cleans up. */
	frame_start(&c.f);
	rescan(&c);
	c.next_rescan = now_ns() + (uint64_t)(c.rescan * 1e9);
	if (!c.nmons)
		fprintf(stderr, "no cluster to serve yet%s\n",
			c.rescan > 0 ? "; looking again every few seconds" : "");
	if (privs_drop(c.user, c.rescan > 0 ? privs_attach_caps() : privs_read_caps()) < 0) {
		serve_teardown(&c);
		return EXIT_FAIL;
	}
	verbose("effective capabilities now 0x%llx", (unsigned long long)privs_effective());
	if (c.textfile)
		write_textfile(&c);
	fprintf(stderr, "serving http://%s/metrics; SIGINT or SIGTERM stops\n",
		http_server_address(c.http));
	return frame_run(&c.f, &ops, &c);
}
