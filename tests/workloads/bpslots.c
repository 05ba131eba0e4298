/* Opens N hardware write breakpoints on its own globals: how many slots are free now. */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Four 8-byte globals, each its own breakpoint. */
static volatile long slot_var[8];

/*
 * usage: bpslots N [HOLD_SECS]
 * Per-task breakpoints on this process, every CPU: the kernel grants one only when a
 * slot is free on all CPUs, per-CPU breakpoints of any other tool included. Prints the
 * number opened (and the errno of the first failure); with HOLD_SECS keeps them open
 * that long (a stand-in for another tool holding the slots), printing "holding" first.
 */
int main(int argc, char **argv)
{
	int want = argc > 1 ? atoi(argv[1]) : 4;
	int hold = argc > 2 ? atoi(argv[2]) : 0;
	int opened = 0, err = 0;

	if (want < 1 || want > 8) {
		fprintf(stderr, "usage: bpslots N(1-8) [HOLD_SECS]\n");
		return 2;
	}
	for (int i = 0; i < want; i++) {
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof(attr));
		attr.type = PERF_TYPE_BREAKPOINT;
		attr.size = sizeof(attr);
		attr.bp_type = HW_BREAKPOINT_W;
		attr.bp_addr = (unsigned long)&slot_var[i];
		attr.bp_len = HW_BREAKPOINT_LEN_8;
		attr.exclude_kernel = 1;
		int fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0) {
			if (!err)
				err = errno;
			continue;
		}
		opened++;
	}
	printf("%d\n", opened);
	if (err)
		fprintf(stderr, "bpslots: %s\n", strerror(err));
	fflush(stdout);
	if (hold > 0) {
		fprintf(stderr, "holding\n");
		sleep(hold);
	}
	return 0;
}
