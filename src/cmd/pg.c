/* dbtap pg: the PostgreSQL clusters running here and what each of their processes is. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "pg/cluster.h"
#include "util/error.h"
#include "util/json.h"

enum { OPT_PG = FRAME_KEY_LONG };

/* --pg here selects a cluster to describe, not processes to trace: its own row. */
static const struct frame_opt pg_opts[] = {
	{ "pg", OPT_PG, optional_argument, "TARGET",
	  "only this cluster: a data directory, a port or a postmaster\n"
	  "pid (alone: the only cluster running)" },
	FRAME_OPT_JSON,
	{ "verbose", 'v', no_argument, NULL, "full process titles", FRAME_OPT_GLOBAL },
	FRAME_OPT_END,
};

static const struct frame_cmd pg_frame = {
	.name = "pg",
	.about =
		"Lists the PostgreSQL clusters running on this machine without connecting to\n"
		"them: postmaster pid, server binary and version, data directory, port, socket\n"
		"directory, state (from DATADIR/postmaster.pid), and every process of each\n"
		"cluster with the backend type pg_stat_activity would report for it.\n"
		"-j prints one JSON object per cluster.\n",
	.examples =
		"  dbtap pg                          every cluster and its processes\n"
		"  dbtap pg --pg /var/lib/postgresql/15/main\n"
		"  dbtap pg -j | jq '.processes[] | select(.type == \"client backend\")'\n",
	.opts = pg_opts,
};

struct pg_args {
	const char *spec;
	bool one;
	int argc;
	char **argv;
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct pg_args *a = ctx;

	if (key != OPT_PG)
		return -1;
	a->one = true;
	a->spec = arg;
	/* "--pg DIR" as well as "--pg=DIR": the value is optional. */
	if (!a->spec && optind < a->argc && a->argv[optind][0] != '-')
		a->spec = a->argv[optind++];
	return 0;
}

static const char *state_of(const struct pg_cluster *c)
{
	if (!c->have_pidfile)
		return "unknown";
	return c->pidfile.status[0] ? c->pidfile.status : "running";
}

static uint64_t start_ns;

static void print_json(const struct pg_cluster *c)
{
	struct json j;

	json_init(&j);
	json_report_begin(&j, "cluster", (now_ns() - start_ns) / 1e9);
	json_int(&j, "postmaster", c->postmaster);
	json_str(&j, "binary", c->binary);
	json_int(&j, "major", c->major);
	json_str(&j, "version", c->version);
	json_str(&j, "datadir", c->datadir);
	if (c->have_pidfile) {
		json_int(&j, "port", c->pidfile.port);
		json_str(&j, "socket_dir", c->pidfile.socket_dir);
		json_str(&j, "listen_addresses", c->pidfile.listen_addr);
		json_int(&j, "start_time", c->pidfile.start_time);
	} else {
		json_null(&j, "port");
		json_null(&j, "socket_dir");
		json_null(&j, "listen_addresses");
		json_null(&j, "start_time");
	}
	json_str(&j, "state", state_of(c));
	json_str(&j, "cluster_name", c->cluster_name);
	json_array_begin(&j, "processes");
	for (int i = 0; i < c->nprocs; i++) {
		const struct pg_proc *p = &c->procs[i];
		json_object_begin(&j, NULL);
		json_int(&j, "pid", p->pid);
		json_str(&j, "type", p->type);
		json_str(&j, "user", p->user[0] ? p->user : NULL);
		json_str(&j, "database", p->database[0] ? p->database : NULL);
		if (p->host[0])
			json_str(&j, "host", p->host);
		if (p->activity[0])
			json_str(&j, "activity", p->activity);
		json_str(&j, "title", p->title);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_flush_line(&j, stdout);
	json_release(&j);
}

static void print_text(const struct pg_cluster *c, bool first)
{
	char when[64] = "";

	if (!first)
		putchar('\n');
	printf("PostgreSQL %s cluster at %s\n", c->version[0] ? c->version : "?", c->datadir);
	printf("  postmaster  %d (%s)\n", c->postmaster, c->binary ? c->binary : "?");
	if (c->have_pidfile) {
		time_t t = c->pidfile.start_time;
		struct tm tm;
		if (t && localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("  state       %s since %s\n", state_of(c), when);
		printf("  port        %d, socket dir %s, listen '%s'\n", c->pidfile.port,
		       c->pidfile.socket_dir[0] ? c->pidfile.socket_dir : "(none)",
		       c->pidfile.listen_addr);
	} else {
		printf("  state       unknown (no readable postmaster.pid)\n");
	}
	if (c->cluster_name[0])
		printf("  name        %s\n", c->cluster_name);
	printf("  %8s  %-30s %s\n", "PID", "TYPE", "DETAILS");
	for (int i = 0; i < c->nprocs; i++) {
		const struct pg_proc *p = &c->procs[i];
		char details[512];

		if (global.verbose || i == 0)
			snprintf(details, sizeof(details), "%s", p->title ? p->title : "");
		else if (p->user[0] && p->database[0])
			snprintf(details, sizeof(details), "%s@%s %s %s", p->user, p->database,
				 p->host, p->activity);
		else if (p->user[0])
			snprintf(details, sizeof(details), "%s %s %s", p->user, p->host, p->activity);
		else if (p->database[0])
			snprintf(details, sizeof(details), "%s %s", p->database, p->activity);
		else
			snprintf(details, sizeof(details), "%s", p->activity);
		/* Keep lines under 100 columns: the full title is in -v and -j. */
		if (!global.verbose && strlen(details) > 56)
			strcpy(details + 53, "...");
		printf("  %8d  %-30s %s\n", p->pid, p->type, details);
	}
}

int cmd_pg(int argc, char **argv)
{
	struct frame f = { 0 };
	struct pg_args a = { .argc = argc, .argv = argv };
	int ret;

	start_ns = now_ns();
	ret = frame_parse(&f, &pg_frame, argc, argv, on_opt, &a);
	if (ret)
		return frame_status(ret);
	const char *spec = a.spec;
	bool one = a.one;
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("dbtap pg takes no arguments; select one cluster with --pg TARGET");
		return EXIT_USAGE;
	}

	if (one) {
		struct pg_cluster c;
		int ret = pg_cluster_resolve(spec, &c);
		if (ret)
			return ret;
		if (global.json)
			print_json(&c);
		else
			print_text(&c, true);
		pg_cluster_free(&c);
		return EXIT_OK;
	}

	struct pg_cluster_list list;
	if (pg_cluster_discover(&list) < 0)
		return EXIT_FAIL;
	if (list.hidden) {
		warning("%d PostgreSQL processes could not be inspected: their clusters may be "
			"missing below", list.hidden);
		hint("run as root (or as the user the server runs as)");
	}
	if (!list.n && !global.json)
		printf("no PostgreSQL server %s on this machine\n",
		       list.hidden ? "could be inspected" : "runs");
	for (int i = 0; i < list.n; i++) {
		if (global.json)
			print_json(&list.c[i]);
		else
			print_text(&list.c[i], i == 0);
	}
	pg_cluster_list_free(&list);
	return EXIT_OK;
}
