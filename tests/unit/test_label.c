/* Unit tests for target/label.c: one label rule for every command. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target/label.h"
#include "target/proc.h"

/* A pid that runs nothing: beyond pid_max's largest value (4194304). */
#define NO_PID 99999999

static void test_kept_title(void **state)
{
	struct pid_label l;

	/* the kernel's copy of an exited backend's title still says what it was */
	assert_true(target_label(NULL, NO_PID, "postgres: alice shop [local] idle", 256, &l));
	assert_string_equal(l.type, "client backend");
	assert_string_equal(l.user, "alice");
	assert_string_equal(l.database, "shop");
	assert_true(target_label(NULL, NO_PID, "postgres: checkpointer ", 256, &l));
	assert_string_equal(l.type, "checkpointer");
	assert_string_equal(l.user, "");
	assert_string_equal(l.database, "");
}

static void test_other_programs(void **state)
{
	struct pid_label l;
	char comm[64];

	/* a live program that is not PostgreSQL's: its command name, maybe not final */
	assert_int_equal(proc_comm(getpid(), comm, sizeof(comm)), 0);
	assert_false(target_label(NULL, getpid(), NULL, 256, &l));
	assert_string_equal(l.type, comm);
	/* gone, with a kept title: argv[0]'s base name */
	assert_true(target_label(NULL, NO_PID, "/usr/bin/funcloop --n 3", 256, &l));
	assert_string_equal(l.type, "funcloop");
	/* gone, nothing kept */
	assert_false(target_label(NULL, NO_PID, "", 256, &l));
	assert_string_equal(l.type, "exited");
	/* a title with no NUL within its buffer is read up to the buffer's end only */
	char unterminated[8];
	memcpy(unterminated, "/bin/abcdefgh", 8);
	assert_true(target_label(NULL, NO_PID, unterminated, sizeof(unterminated), &l));
	assert_string_equal(l.type, "abc");
	assert_false(target_label(NULL, NO_PID, NULL, 256, &l));
	assert_string_equal(l.type, "exited");
}

static void test_postmaster(void **state)
{
	struct target t;
	struct pid_label l;

	memset(&t, 0, sizeof(t));
	t.kind = TARGET_PG;
	t.pg.postmaster = NO_PID;
	assert_true(target_label(&t, NO_PID, "postgres -D /data", 256, &l));
	assert_string_equal(l.type, "postmaster");
	/* not one of the cluster's, gone: what its kept title says, else exited */
	assert_true(target_label(&t, NO_PID - 1, "postgres: bob db 10.0.0.1(5432) SELECT", 256, &l));
	assert_string_equal(l.type, "client backend");
	assert_string_equal(l.database, "db");
	assert_false(target_label(&t, NO_PID - 1, NULL, 256, &l));
	assert_string_equal(l.type, "exited");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_title),
		cmocka_unit_test(test_other_programs),
		cmocka_unit_test(test_postmaster),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
