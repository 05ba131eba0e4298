/* Unit tests for bpf/tracepoint.c: a tracepoint named by the BTF's strings, held against the BTF parsed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <unistd.h>

#include "bpf/tracepoint.h"

/* Names that exist since long before 6.4, one since 6.4, and ones that never did. */
static const char *const names[] = {
	"sched_switch", "sched_process_exit", "sock_recv_length", "sock_send_length",
	"no_such_tracepoint_here", "sched_switc", "ched_switch", "",
};

static void test_named_as_parsed(void **state)
{
	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		skip();
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(tracepoint_named(names[i]), tracepoint_exists(names[i]));
	/* every kernel with BPF raw tracepoints has this one */
	assert_true(tracepoint_named("sched_switch"));
	/* a prefix or a part of a name is not the name */
	assert_false(tracepoint_named("sched_switc"));
	assert_false(tracepoint_named("ched_switch"));
	assert_false(tracepoint_named(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_as_parsed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
