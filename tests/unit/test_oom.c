/*
 * Allocation failures: the allocator is wrapped (-Wl,--wrap, see the Makefile) so that
 * the Nth call fails; each function must then fail cleanly, report it, and not crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/count.h"
#include "bpf/latency.h"
#include "perf/breakpoint.h"
#include "report/hist.h"
#include "target/proc.h"
#include "target/target.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

static int fail_at; /* 0: never; k: the kth call from now fails */

static bool should_fail(void)
{
	return fail_at > 0 && --fail_at == 0;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

/* Every allocation of a children list failing in turn: -1, never a partial list. */
static void test_proc_list_realloc_fails(void **state)
{
	pid_t *tids = NULL;
	int n;

	for (int k = 1; k <= 4; k++) {
		fail_at = k;
		n = proc_children(1, &tids);
		if (fail_at != 0) {
			/* k is past the allocations this takes: the list came whole */
			fail_at = 0;
			assert_true(n >= 0);
			free(tids);
			return;
		}
		assert_int_equal(n, -1);
	}
	fail_at = 0;
}

static void test_count_probe_open_oom(void **state)
{
	struct target t = { .kind = TARGET_NONE };
	struct probe_list pl = { 0 };

	for (int k = 1; k <= 2; k++) {
		fail_at = k;
		assert_null(count_probe_open(&t, &pl, false, false));
		fail_at = 0;
	}
}

static void test_lat_probe_open_oom(void **state)
{
	struct target t = { .kind = TARGET_NONE };
	struct hist_spec spec = { .kind = DISP_LOG2 };
	struct lat_probe_opts o = { .target = &t, .hist = &spec };

	for (int k = 1; k <= 2; k++) {
		fail_at = k;
		assert_null(lat_probe_open(&o));
		fail_at = 0;
	}
}

/* The per-CPU fd arrays are allocated before any breakpoint is opened. */
static void test_breakpoint_set_open_oom(void **state)
{
	static long word;

	for (int k = 1; k <= 2; k++) {
		struct breakpoint_set s;

		fail_at = k;
		errno = 0;
		assert_int_equal(breakpoint_set_open(&s, (uintptr_t)&word, 8, WATCH_W), -1);
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(s.n, 0);
		assert_null(s.fds);
		fail_at = 0;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_list_realloc_fails),
		cmocka_unit_test(test_count_probe_open_oom),
		cmocka_unit_test(test_lat_probe_open_oom),
		cmocka_unit_test(test_breakpoint_set_open_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
