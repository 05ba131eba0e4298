/* Sampling perf events, one per CPU or one per thread, for a BPF program to run on at each overflow. */
#ifndef DBTAP_PERF_SAMPLE_H
#define DBTAP_PERF_SAMPLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One opened event: on a CPU (tid -1) or on a thread (cpu -1). */
struct sample_event {
	int fd;
	int cpu;
	pid_t tid;
};

struct sample_set {
	int n;   /* events opened */
	int cap; /* room in ev */
	struct sample_event *ev;
};

/*
 * Opens attr (its sample_period or sample_freq set by the caller) on every online CPU
 * with pid -1: per-CPU events see every task, later forks included, and the attached
 * program decides who counts. Offline CPUs are skipped. 0, or the errno of the first
 * failure with nothing left open.
 */
int sample_set_open(struct sample_set *s, const struct perf_event_attr *attr);
/*
 * Opens attr on thread tid, on whatever CPU it runs (cpu -1), and adds it to s (which
 * starts zeroed). With inherit, the threads and processes tid creates from now on
 * get a copy of the event, the attached BPF program included (the kernel copies the
 * program at the fork, so attach before the target can create any). 0 or an errno.
 */
int sample_set_add_thread(struct sample_set *s, const struct perf_event_attr *attr, pid_t tid,
			  bool inherit);
void sample_set_close(struct sample_set *s);

/* kernel.perf_event_max_sample_rate (the highest -F the kernel takes), 0 if unreadable. */
int64_t sample_max_rate(void);

#endif
