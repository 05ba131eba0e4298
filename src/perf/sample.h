/* Sampling perf events, one per CPU, for a BPF program to run on at each overflow. */
#ifndef DBTAP_PERF_SAMPLE_H
#define DBTAP_PERF_SAMPLE_H

#include <linux/perf_event.h>
#include <stdint.h>

struct sample_set {
	int n;     /* fds opened */
	int *fds;
	int *cpus; /* cpu of fds[i] */
};

/*
 * Opens attr (its sample_period or sample_freq set by the caller) on every online CPU
 * with pid -1: per-CPU events see every task, later forks included, and the attached
 * program decides who counts. Offline CPUs are skipped. 0, or the errno of the first
 * failure with nothing left open.
 */
int sample_set_open(struct sample_set *s, const struct perf_event_attr *attr);
void sample_set_close(struct sample_set *s);

/* kernel.perf_event_max_sample_rate (the highest -F the kernel takes), 0 if unreadable. */
int64_t sample_max_rate(void);

#endif
