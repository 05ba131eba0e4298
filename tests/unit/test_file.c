/* Unit tests for util/file.c: whole text files under a bound, FIFOs, devices, directories and binaries refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/file.h"

static char dir[] = "/tmp/dbtap-test-file.XXXXXX";

static const char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void write_file(const char *name, const char *data, size_t len)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	const char *names[] = { "text", "empty", "nul", "big", "fifo" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path_of(names[i]));
	return rmdir(dir);
}

static void test_text(void **state)
{
	char *t;
	size_t n;

	write_file("text", "a\nb\n", 4);
	assert_int_equal(file_read_text(path_of("text"), 4, "file", NULL, &t, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(t, "a\nb\n");
	free(t);
	write_file("empty", "", 0);
	assert_int_equal(file_read_text(path_of("empty"), 10, "file", NULL, &t, &n), 0);
	assert_int_equal(n, 0);
	assert_string_equal(t, "");
	free(t);
}

static void test_refused(void **state)
{
	char *t = (char *)"x";
	size_t n = 1;

	/* one byte over the bound */
	write_file("big", "12345", 5);
	assert_int_equal(file_read_text(path_of("big"), 4, "file", NULL, &t, &n), EXIT_USAGE);
	assert_null(t);
	assert_int_equal(n, 0);
	write_file("nul", "ab\0cd", 5);
	assert_int_equal(file_read_text(path_of("nul"), 100, "file", NULL, &t, &n), EXIT_USAGE);
	assert_null(t);
	/* what is no regular file, refused before reading: none of these may block */
	assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
	assert_int_equal(file_read_text(path_of("fifo"), 100, "file", NULL, &t, &n), EXIT_USAGE);
	assert_int_equal(file_read_text("/dev/zero", 100, "file", NULL, &t, &n), EXIT_USAGE);
	assert_int_equal(file_read_text(dir, 100, "file", NULL, &t, &n), EXIT_USAGE);
	assert_int_equal(file_read_text(path_of("nothere"), 100, "file", "h", &t, &n), EXIT_USAGE);
	assert_null(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
