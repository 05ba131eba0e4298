/* dbtap bench: per-thread write breakpoints, and why one could not be opened. */
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/breakpoint.h"
#include "perf/breakpoint.h"

int bench_breakpoint_open(pid_t tid, uint64_t addr, bool sampling, char *reason, size_t rlen)
{
	struct perf_event_attr attr;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_addr = addr;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_W;
	/* Counting alone is what `perf stat -e mem:ADDR:w` costs; sampling runs BPF. */
	attr.sample_period = sampling ? 1 : 0;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	fd = (int)syscall(__NR_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		return fd;
	err = errno;
	switch (err) {
	case ENOSPC:
		snprintf(reason, rlen, "no free hardware breakpoint slot (all %d taken by other tools)",
			 breakpoint_slots());
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(reason, rlen, "this machine has no hardware breakpoints (%s)", strerror(err));
		break;
	case EACCES:
	case EPERM:
		snprintf(reason, rlen, "not allowed to open a hardware breakpoint (%s): run as root",
			 strerror(err));
		break;
	default:
		snprintf(reason, rlen, "cannot open a hardware breakpoint at 0x%" PRIx64 ": %s", addr,
			 strerror(err));
	}
	return -err;
}

int bench_breakpoint_count(int fd, uint64_t *count)
{
	return read(fd, count, sizeof(*count)) == sizeof(*count) ? 0 : -1;
}
