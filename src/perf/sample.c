/* Sampling perf events on every CPU: the carrier of dbtap profile's BPF program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "perf/event.h"
#include "perf/sample.h"

int sample_set_open(struct sample_set *s, const struct perf_event_attr *attr)
{
	int ncpus = libbpf_num_possible_cpus(), first_err = 0;

	s->n = 0;
	s->fds = calloc(ncpus > 0 ? ncpus : 1, sizeof(int));
	s->cpus = calloc(ncpus > 0 ? ncpus : 1, sizeof(int));
	if (ncpus <= 0 || !s->fds || !s->cpus) {
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
		s->fds[s->n] = fd;
		s->cpus[s->n++] = c;
	}
	if (first_err || !s->n) {
		sample_set_close(s);
		return first_err ? first_err : ENODEV;
	}
	return 0;
}

void sample_set_close(struct sample_set *s)
{
	for (int i = 0; i < s->n; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->cpus);
	s->fds = s->cpus = NULL;
	s->n = 0;
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
