/* Unit tests for target/proc.c: maps lines, and the readers against this very process. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/proc.h"
#include "target/scan.h"

static void test_maps_file_backed(void **state)
{
	struct map_entry m;

	assert_int_equal(proc_parse_maps_line(
		"55d0c2a00000-55d0c2b3f000 r-xp 00051000 fd:01 1835123    "
		"/usr/lib/postgresql/15/bin/postgres\n", &m), 0);
	assert_int_equal(m.start, 0x55d0c2a00000ull);
	assert_int_equal(m.end, 0x55d0c2b3f000ull);
	assert_string_equal(m.perms, "r-xp");
	assert_int_equal(m.offset, 0x51000);
	assert_int_equal(m.inode, 1835123);
	assert_string_equal(m.path, "/usr/lib/postgresql/15/bin/postgres");
}

static void test_maps_anonymous_and_special(void **state)
{
	struct map_entry m;

	assert_int_equal(proc_parse_maps_line(
		"7f1c8a1ff000-7f1c8a200000 rw-p 00000000 00:00 0 \n", &m), 0);
	assert_string_equal(m.path, "");
	assert_int_equal(m.inode, 0);
	assert_int_equal(proc_parse_maps_line(
		"7f1c8a1ff000-7f1c8a200000 rw-p 00000000 00:00 0", &m), 0);
	assert_string_equal(m.path, "");
	assert_int_equal(proc_parse_maps_line(
		"55d0c4c5e000-55d0c4ce1000 rw-p 00000000 00:00 0                          [heap]\n",
		&m), 0);
	assert_string_equal(m.path, "[heap]");
	/* PostgreSQL's main shared memory segment. */
	assert_int_equal(proc_parse_maps_line(
		"7f1c7a000000-7f1c82a2c000 rw-s 00000000 00:01 3078    /dev/zero (deleted)\n", &m), 0);
	assert_string_equal(m.perms, "rw-s");
	assert_string_equal(m.path, "/dev/zero (deleted)");
	assert_int_equal(proc_parse_maps_line(
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   [vsyscall]\n", &m), 0);
	assert_int_equal(m.start, 0xffffffffff600000ull);
	assert_string_equal(m.path, "[vsyscall]");
}

static void test_maps_spaces_in_path(void **state)
{
	struct map_entry m;

	assert_int_equal(proc_parse_maps_line(
		"400000-401000 r--p 00000000 08:01 42   /opt/my app/bin/server\n", &m), 0);
	assert_string_equal(m.path, "/opt/my app/bin/server");
}

static void test_maps_garbage(void **state)
{
	struct map_entry m;

	assert_int_equal(proc_parse_maps_line("", &m), -1);
	assert_int_equal(proc_parse_maps_line("not a maps line", &m), -1);
	assert_int_equal(proc_parse_maps_line("400000-401000 r--p", &m), -1);
}

struct find_fn {
	uint64_t addr;
	char path[512];
	int lines;
};

static int find_cb(const struct map_entry *m, void *arg)
{
	struct find_fn *f = arg;

	f->lines++;
	if (f->addr >= m->start && f->addr < m->end)
		snprintf(f->path, sizeof(f->path), "%s", m->path);
	return 0;
}

/* Every line of our own maps parses, and the one holding this function is our binary. */
static void test_maps_self(void **state)
{
	struct find_fn f = { .addr = (uint64_t)(uintptr_t)test_maps_self };
	char *exe = proc_exe(getpid());
	FILE *fp = fopen("/proc/self/maps", "r");
	char line[1024];
	int want = 0;

	assert_non_null(exe);
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		want++;
	fclose(fp);
	assert_int_equal(proc_maps_foreach(getpid(), find_cb, &f), 0);
	assert_true(f.lines >= want - 2 && f.lines <= want + 2); /* allocations in between */
	assert_string_equal(f.path, exe);
	assert_true(proc_addr_mapped(getpid(), f.addr, 1));
	assert_false(proc_addr_mapped(getpid(), 8, 1));
	free(exe);
}

static void test_self(void **state)
{
	char comm[32];
	pid_t *tids = NULL, *pids = NULL;
	int n;
	char *title;

	assert_true(proc_exists(getpid()));
	assert_int_equal(proc_ppid(getpid()), getppid());
	assert_int_equal(proc_tgid(getpid()), getpid());
	assert_int_equal(proc_comm(getpid(), comm, sizeof(comm)), 0);
	assert_string_equal(comm, "test_proc");
	title = proc_title(getpid());
	assert_non_null(title);
	assert_non_null(strstr(title, "test_proc"));
	free(title);
	n = proc_threads(getpid(), &tids);
	assert_int_equal(n, 1);
	assert_int_equal(tids[0], getpid());
	free(tids);

	/* proc_list holds us and our parent. */
	n = proc_list(&pids);
	assert_true(n > 1);
	int seen = 0;
	for (int i = 0; i < n; i++) {
		seen += pids[i] == getpid() || pids[i] == getppid();
		if (i)
			assert_true(pids[i - 1] < pids[i]);
	}
	assert_int_equal(seen, 2);
	free(pids);
	assert_false(proc_exists(-1));
	assert_int_equal(proc_ppid(0x7ffffff0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_file_backed),
		cmocka_unit_test(test_maps_anonymous_and_special),
		cmocka_unit_test(test_maps_spaces_in_path),
		cmocka_unit_test(test_maps_garbage),
		cmocka_unit_test(test_maps_self),
		cmocka_unit_test(test_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
