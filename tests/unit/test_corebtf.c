/* Unit tests for bpf/corebtf.c: when the built-in minimal BTF may stand for the kernel's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bpf/corebtf.h"

/* "123456789" is CRC-32's standard check input; its CRC is 0xcbf43926. */
static char path[] = "/tmp/dbtap-test-corebtf.XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "123456789", 9) != 9)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

static void test_match(void **state)
{
	assert_true(core_btf_file_matches(path, 9, 0xcbf43926ul));
}

static void test_mismatch(void **state)
{
	assert_false(core_btf_file_matches(path, 9, 0xcbf43927ul)); /* another kernel */
	assert_false(core_btf_file_matches(path, 10, 0xcbf43926ul));
	assert_false(core_btf_file_matches("/nonexistent/vmlinux", 9, 0xcbf43926ul));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_mismatch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
