/* perf_event_open(PERF_TYPE_BREAKPOINT): per-CPU sets and per-thread breakpoints, errors turned into hints. */
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/breakpoint.h"
#include "util/error.h"

int breakpoint_slots(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return 4;
#else
	return -1; /* arm64 and others: the count is in a debug register, not exposed */
#endif
}

static int bp_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void explain(int err, uint64_t addr, int len, int cpu)
{
	int slots = breakpoint_slots();

	switch (err) {
	case ENOSPC:
		if (slots > 0)
			error("no free hardware breakpoint slot on cpu %d: all %d are taken", cpu, slots);
		else
			error("no free hardware breakpoint slot on cpu %d", cpu);
		hint("other tools may hold them (gdb watchpoints, perf, bpftrace, another dbtap);"
		     " stop one, then retry");
		break;
	case EINVAL:
		error("the kernel refused a %d-byte breakpoint at 0x%" PRIx64, len, addr);
		hint("the address must be a multiple of the length (1, 2, 4 or 8), inside user"
		     " space");
		break;
	case EACCES:
	case EPERM:
		error("not allowed to open a hardware breakpoint on every cpu");
		hint("run as root, or give CAP_PERFMON and lower"
		     " /proc/sys/kernel/perf_event_paranoid");
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		error("hardware breakpoints are not available on this machine (cpu %d)", cpu);
		hint("some virtual machines do not pass debug registers through;"
		     " 'dbtap doctor' shows what works here");
		break;
	default:
		error("cannot open a hardware breakpoint at 0x%" PRIx64 " on cpu %d: %s", addr, cpu,
		      strerror(err));
		hint("'dbtap doctor' shows what works here");
	}
}

int breakpoint_set_open(struct breakpoint_set *s, uint64_t addr, int len, enum watch_mode mode)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr attr;

	memset(s, 0, sizeof(*s));
	if (ncpu < 1)
		ncpu = 1;
	s->fds = calloc(ncpu, sizeof(int));
	s->cpus = calloc(ncpu, sizeof(int));
	s->addr = addr;
	s->len = len;
	s->mode = mode;
	if (!s->fds || !s->cpus) {
		breakpoint_set_close(s);
		error("out of memory for %ld breakpoint fds", ncpu);
		errno = ENOMEM;
		return -1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_addr = addr;
	attr.bp_len = len;
	attr.bp_type = mode == WATCH_RW ? HW_BREAKPOINT_RW :
		       mode == WATCH_X ? HW_BREAKPOINT_X : HW_BREAKPOINT_W;
	attr.sample_period = 1; /* every hit runs the attached program */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = bp_open(&attr, cpu);
		if (fd < 0) {
			if (errno == ENODEV && s->n > 0)
				continue; /* an offline cpu */
			int err = errno;
			explain(err, addr, len, cpu);
			breakpoint_set_close(s);
			errno = err;
			return -1;
		}
		s->cpus[s->n] = cpu;
		s->fds[s->n++] = fd;
	}
	return 0;
}

void breakpoint_set_close(struct breakpoint_set *s)
{
	for (int i = 0; i < s->n; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->cpus);
	s->fds = s->cpus = NULL;
	s->n = 0;
}

uint64_t breakpoint_set_count(const struct breakpoint_set *s)
{
	uint64_t total = 0;
	for (int i = 0; i < s->n; i++) {
		uint64_t v;
		if (read(s->fds[i], &v, sizeof(v)) == sizeof(v))
			total += v;
	}
	return total;
}

int breakpoint_open_task(pid_t tid, uint64_t addr, bool sampling, char *reason, size_t rlen)
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

int breakpoint_read_count(int fd, uint64_t *count)
{
	return read(fd, count, sizeof(*count)) == sizeof(*count) ? 0 : -1;
}
