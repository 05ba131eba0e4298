/* Unit tests for pg_title_parse: every process title, with and without cluster_name. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "pg/cluster.h"

/* Title after "postgres: " (and the cluster name), the type pg_stat_activity shows. */
static const struct {
	const char *rest, *type, *user, *db, *host, *activity;
} cases[] = {
	{ "checkpointer", "checkpointer", "", "", "", "" },
	{ "background writer", "background writer", "", "", "", "" },
	{ "walwriter", "walwriter", "", "", "", "" },
	{ "autovacuum launcher", "autovacuum launcher", "", "", "", "" },
	{ "autovacuum worker pgbench", "autovacuum worker", "", "pgbench", "", "" },
	{ "logical replication launcher", "logical replication launcher", "", "", "", "" },
	{ "logical replication worker for subscription 16390", "logical replication worker",
	  "", "", "", "for subscription 16390" },
	{ "logical replication worker for subscription 16390 sync 16384",
	  "logical replication worker", "", "", "", "for subscription 16390 sync 16384" },
	{ "logical replication apply worker for subscription 16390",
	  "logical replication apply worker", "", "", "", "for subscription 16390" },
	{ "logical replication tablesync worker for subscription 16390 sync 16384",
	  "logical replication tablesync worker", "", "", "", "for subscription 16390 sync 16384" },
	{ "logical replication parallel apply worker for subscription 16390",
	  "logical replication parallel worker", "", "", "", "for subscription 16390" },
	{ "parallel worker for PID 4242", "parallel worker", "", "", "", "for PID 4242" },
	{ "walsender repl 10.0.0.7(51234) streaming 0/3000148", "walsender", "repl",
	  "", "10.0.0.7(51234)", "streaming 0/3000148" },
	{ "walsender postgres [local] idle", "walsender", "postgres", "", "[local]", "idle" },
	{ "walreceiver streaming 0/3000148", "walreceiver", "", "", "", "streaming 0/3000148" },
	{ "walreceiver", "walreceiver", "", "", "", "" },
	{ "startup recovering 000000010000000000000003", "startup", "", "", "",
	  "recovering 000000010000000000000003" },
	{ "archiver last was 000000010000000000000002", "archiver", "", "", "",
	  "last was 000000010000000000000002" },
	{ "archiver", "archiver", "", "", "", "" },
	{ "logger", "logger", "", "", "", "" },
	{ "stats collector", "stats collector", "", "", "", "" },
	{ "walsummarizer", "walsummarizer", "", "", "", "" },
	{ "slotsync worker", "slotsync worker", "", "", "", "" },
	{ "io worker 0", "io worker", "", "", "", "0" },
	{ "postgres postgres [local] idle", "client backend", "postgres", "postgres", "[local]",
	  "idle" },
	{ "alice shop 192.168.1.20(40112) idle in transaction", "client backend", "alice",
	  "shop", "192.168.1.20(40112)", "idle in transaction" },
	{ "bob shop ::1(5511) SELECT", "client backend", "bob", "shop", "::1(5511)", "SELECT" },
	{ "bob shop db.example.com(5511) UPDATE waiting", "client backend", "bob", "shop",
	  "db.example.com(5511)", "UPDATE waiting" },
	{ "postgres postgres [local] authentication", "client backend", "postgres", "postgres",
	  "[local]", "authentication" },
	/* Just after fork, before the query loop sets a status. */
	{ "postgres postgres [local]", "client backend", "postgres", "postgres", "[local]", "" },
	/* A user named like a process type is still a client. */
	{ "walwriter appdb [local] idle", "client backend", "walwriter", "appdb", "[local]", "idle" },
	/* An extension's background worker: its title is its own name. */
	{ "pg_cron launcher", "background worker", "", "", "", "pg_cron launcher" },
	{ "TimescaleDB Background Worker Scheduler", "background worker", "", "", "",
	  "TimescaleDB Background Worker Scheduler" },
};

static const char *cluster_names[] = { "", "main", "15/main", "my cluster", "a: b" };

static void test_every_type(void **state)
{
	char title[512];
	struct pg_title t;

	for (size_t n = 0; n < sizeof(cluster_names) / sizeof(cluster_names[0]); n++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (cluster_names[n][0])
				snprintf(title, sizeof(title), "postgres: %s: %s", cluster_names[n],
					 cases[i].rest);
			else
				snprintf(title, sizeof(title), "postgres: %s", cases[i].rest);
			if (pg_title_parse_full(title, &t) != 0)
				fail_msg("not parsed: '%s'", title);
			if (strcmp(t.type, cases[i].type))
				fail_msg("'%s': type '%s', want '%s'", title, t.type, cases[i].type);
			assert_string_equal(t.user, cases[i].user);
			assert_string_equal(t.database, cases[i].db);
			assert_string_equal(t.host, cases[i].host);
			if (strcmp(cases[i].type, "background worker")) {
				assert_string_equal(t.activity, cases[i].activity);
				assert_string_equal(t.cluster_name, cluster_names[n]);
			} else {
				/*
				 * An unknown worker's own name cannot be told from a cluster
				 * name by its title alone: the whole rest is kept (discovery
				 * strips the name its siblings show).
				 */
				assert_string_equal(t.activity, title + strlen("postgres: "));
				assert_string_equal(t.cluster_name, "");
			}
		}
	}
}

/* The short form fills the same type, user and database. */
static void test_short_form(void **state)
{
	char type[64], user[64], db[64];

	assert_int_equal(pg_title_parse("postgres: 15/main: alice shop [local] idle", type,
					sizeof(type), user, sizeof(user), db, sizeof(db)), 0);
	assert_string_equal(type, "client backend");
	assert_string_equal(user, "alice");
	assert_string_equal(db, "shop");
	assert_int_equal(pg_title_parse("postgres: checkpointer", type, sizeof(type), NULL, 0,
					NULL, 0), 0);
	assert_string_equal(type, "checkpointer");
	/* Small buffers are cut, not overrun. */
	assert_int_equal(pg_title_parse("postgres: background writer", type, 5, NULL, 0, NULL, 0), 0);
	assert_string_equal(type, "back");
}

/* Not a child's title: the postmaster keeps its command line; other programs. */
static void test_not_children(void **state)
{
	struct pg_title t;

	assert_int_equal(pg_title_parse_full("/usr/lib/postgresql/15/bin/postgres -D /data", &t), -1);
	assert_int_equal(pg_title_parse_full("postgres -D /data -p 5433", &t), -1);
	assert_int_equal(pg_title_parse_full("bash", &t), -1);
	assert_int_equal(pg_title_parse_full("", &t), -1);
	assert_int_equal(pg_title_parse_full("postgres:checkpointer", &t), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_short_form),
		cmocka_unit_test(test_not_children),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
