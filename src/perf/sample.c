/* Sampling perf events on every CPU or on given threads: the carrier of dbtap profile's BPF program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "perf/event.h"
#include "perf/sample.h"

int sample_set_open(struct sample_set *s, const struct perf_event_attr *attr)
{
	int ncpus = libbpf_num_possible_cpus(), first_err = 0;

	s->n = 0;
	s->cap = ncpus > 0 ? ncpus : 1;
	s->ev = calloc(s->cap, sizeof(*s->ev));
	if (ncpus <= 0 || !s->ev) {
		sample_set_close(s);
		return ENOMEM;
	}
	for (int c = 0; c < ncpus; c++) {
		struct perf_event_attr a = *attr;
		a.size = sizeof(a);
		a.disabled = 0;
		a.inherit = 0;
		int fd = perf_event_open_attr(&a, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			/* a possible CPU that is offline has nothing to sample */
			if (errno == ENODEV)
				continue;
			first_err = errno;
			break;
		}
		s->ev[s->n++] = (struct sample_event){ .fd = fd, .cpu = c, .tid = -1 };
	}
	if (first_err || !s->n) {
		sample_set_close(s);
		return first_err ? first_err : ENODEV;
	}
	return 0;
}

static int grow(struct sample_set *s)
{
	int cap = s->cap ? s->cap * 2 : 16;
	struct sample_event *ev = realloc(s->ev, cap * sizeof(*ev));

	if (!ev)
		return ENOMEM;
	s->ev = ev;
	s->cap = cap;
	return 0;
}

/* Out of descriptors: one event a thread needs many; the hard limit is the bound (as perf does). */
static bool raise_nofile(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= r.rlim_max)
		return false;
	r.rlim_cur = r.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &r) == 0;
}

/*
 * A cpu-clock event bound to a thread runs its timer only while that thread is on a
 * CPU: at a switch out the kernel keeps what is left of the period and starts the
 * timer again with it at the next switch in. So a thread that ran T seconds gets
 * T x HZ samples, to one period, however its time is cut into bursts. An event per CPU
 * fires at fixed instants instead and samples whatever runs then; on a loaded machine
 * those instants are not independent of the scheduler (the timer interrupt is also
 * where a woken task preempts the running one), and a thread that runs in short bursts
 * is sampled more or less often than its CPU time says.
 */
int sample_set_add_thread(struct sample_set *s, const struct perf_event_attr *attr, pid_t tid,
			  bool inherit)
{
	struct perf_event_attr a = *attr;
	int fd;

	if (s->n == s->cap && grow(s))
		return ENOMEM;
	a.size = sizeof(a);
	a.disabled = 0;
	a.inherit = inherit;
	fd = perf_event_open_attr(&a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && raise_nofile())
		fd = perf_event_open_attr(&a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	s->ev[s->n++] = (struct sample_event){ .fd = fd, .cpu = -1, .tid = tid };
	return 0;
}

void sample_set_close(struct sample_set *s)
{
	for (int i = 0; i < s->n; i++)
		close(s->ev[i].fd);
	free(s->ev);
	s->ev = NULL;
	s->n = s->cap = 0;
}

int64_t sample_max_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	long long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lld", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}
