/* Unit tests for target/target.c and bpf/filter.c: -p/-t resolution and the pid filter map. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <getopt.h>

#include "bpf/filter.h"
#include "target/scan.h"
#include "target/target.h"
#include "util/error.h"

/* Runs target_opt as a getopt loop would, with optarg/optind set up for it. */
static bool opt_with(struct target_opts *o, int opt, char *arg, int argc, char **argv, int next)
{
	optarg = arg;
	optind = next;
	return target_opt(o, opt, argc, argv);
}

static void test_opts(void **state)
{
	struct target_opts o = { 0 };
	char *argv[] = { "watch", "--pg", "xid", "--pg", "5432", "--pg", "/data", NULL };

	assert_true(opt_with(&o, 'P', NULL, 7, argv, 2));
	assert_true(o.pg_set);
	assert_null(o.pg);            /* "xid" is the command's word, not a target */
	assert_int_equal(optind, 2);
	assert_true(opt_with(&o, 'P', NULL, 7, argv, 4));
	assert_string_equal(o.pg, "5432");
	assert_int_equal(optind, 5);
	assert_true(opt_with(&o, 'P', NULL, 7, argv, 6));
	assert_string_equal(o.pg, "/data");
	assert_true(opt_with(&o, 'P', "9.6", 7, argv, 7));
	assert_string_equal(o.pg, "9.6"); /* --pg=VALUE is taken as given */
	assert_true(opt_with(&o, 'p', "1,2", 7, argv, 7));
	assert_string_equal(o.pids, "1,2");
	assert_true(opt_with(&o, 't', "3", 7, argv, 7));
	assert_string_equal(o.tid, "3");
	assert_false(opt_with(&o, 'i', "1", 7, argv, 7));
}

static void test_none(void **state)
{
	struct target_opts o = { 0 };
	struct target t;

	assert_int_equal(target_resolve(&t, &o, false), 0);
	assert_int_equal(t.kind, TARGET_NONE);
	assert_true(target_has_pid(&t, 1));
	assert_string_equal(target_describe(&t), "every process");
	target_free(&t);
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE);
}

static volatile pid_t thread_tid;
static volatile int thread_stop;

static void *thread_fn(void *arg)
{
	thread_tid = (pid_t)syscall(SYS_gettid);
	while (!thread_stop)
		usleep(1000);
	return NULL;
}

/* Our pid twice and our parent: deduplicated; a thread id means its process. */
static void test_pids(void **state)
{
	struct target_opts o = { 0 };
	struct target t;
	pthread_t th;
	char list[64], *exe = NULL;

	pthread_create(&th, NULL, thread_fn, NULL);
	while (!thread_tid)
		usleep(1000);
	snprintf(list, sizeof(list), "%d,%d,%d", getpid(), getppid(), thread_tid);
	o.pids = list;
	assert_int_equal(target_resolve(&t, &o, true), 0);
	assert_int_equal(t.kind, TARGET_PIDS);
	assert_int_equal(t.npids, 2);
	assert_int_equal(t.pids[0], getpid());
	assert_int_equal(t.pids[1], getppid());
	assert_true(target_has_pid(&t, getpid()));
	assert_true(target_has_pid(&t, getppid()));
	if (getppid() != 1)
		assert_false(target_has_pid(&t, 1));
	assert_string_equal(target_proc_type(&t, getpid()), "");
	assert_true(target_alive(&t));
	exe = realpath("/proc/self/exe", NULL);
	assert_string_equal(t.binary, exe);
	free(exe);
	snprintf(list, sizeof(list), "pids %d,%d", getpid(), getppid());
	assert_string_equal(target_describe(&t), list);

	/* The filter map gets exactly these tgids. */
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 1, 1024, NULL);
	assert_true(fd >= 0);
	assert_int_equal(target_filter_fill(fd, &t), 0);
	uint32_t key, next, n = 0;
	uint8_t val;
	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		assert_int_equal(bpf_map_lookup_elem(fd, &key, &val), 0);
		assert_int_equal(val, 1);
		assert_true(key == (uint32_t)getpid() || key == (uint32_t)getppid());
		n++;
	}
	assert_int_equal(n, 2);
	close(fd);
	target_free(&t);

	/* -t: the thread and its process. */
	memset(&o, 0, sizeof(o));
	snprintf(list, sizeof(list), "%d", thread_tid);
	o.tid = list;
	assert_int_equal(target_resolve(&t, &o, true), 0);
	assert_int_equal(t.kind, TARGET_TID);
	assert_int_equal(t.tid, thread_tid);
	assert_int_equal(t.pids[0], getpid());
	assert_true(target_has_pid(&t, getpid()));
	target_free(&t);

	thread_stop = 1;
	pthread_join(th, NULL);
}

static void test_bad(void **state)
{
	struct target_opts o = { 0 };
	struct target t;

	o.pids = "12x";
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE);
	o.pids = "";
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE);
	o.pids = "0";
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE);
	o.pids = "2147483647"; /* above any pid_max */
	assert_int_equal(target_resolve(&t, &o, true), EXIT_FAIL);
	o.tid = "1";
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE); /* two targets */
}

/* -p's syntax is checked whole before any process is looked at. */
static void test_pid_list(void **state)
{
	const char *bad[] = { "1,,2", "1,", ",1", ",", "", "1, 2", " 1", "+1", "-1", "1;2",
			      "99999999999", "0x10", "1,2,", "1,0" };
	pid_t *pids;
	int n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (target_pid_list_parse(bad[i], &pids, &n) != EXIT_USAGE)
			fail_msg("'%s' parsed", bad[i]);
		assert_null(pids);
		assert_int_equal(n, 0);
	}
	assert_int_equal(target_pid_list_parse("12,1,12", &pids, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 1);
	assert_int_equal(pids[2], 12);
	free(pids);

	/* through target_resolve: refused as usage even when the first pid is fine */
	struct target_opts o = { 0 };
	struct target t;
	char list[32];

	snprintf(list, sizeof(list), "%d,,%d", (int)getpid(), (int)getpid());
	o.pids = list;
	assert_int_equal(target_resolve(&t, &o, true), EXIT_USAGE);
}

/* scan.c: a marked string inside a file, our own capabilities. */
static void test_scan(void **state)
{
	char path[] = "/tmp/dbtap-test-scan.XXXXXX", out[32];
	int fd = mkstemp(path);
	static const char data[] = "\x7f" "ELF\0\0junk (PostgreSQL) 15.18 (Debian)\0more";
	unsigned long long caps = 0;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);
	assert_int_equal(file_find_string(path, "(PostgreSQL) ", out, sizeof(out)), 0);
	assert_string_equal(out, "15.18 (Debian)");
	assert_int_equal(file_find_string(path, "(PostgreSQL) ", out, 6), 0);
	assert_string_equal(out, "15.18");
	assert_int_equal(file_find_string(path, "absent", out, sizeof(out)), -1);
	assert_int_equal(file_find_string("/nonexistent", "x", out, sizeof(out)), -1);
	unlink(path);

	assert_int_equal(proc_cap_eff(getpid(), &caps), 0);
	if (geteuid() == 0)
		assert_true(caps & (1ull << 21)); /* CAP_SYS_ADMIN */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
