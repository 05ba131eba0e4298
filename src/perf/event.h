/* Event names as perf accepts them (libpfm4), and perf_event_open errors turned into hints. */
#ifndef DBTAP_PERF_EVENT_H
#define DBTAP_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PERF_EVENT_NAME_MAX 64

struct perf_event_desc {
	char name[PERF_EVENT_NAME_MAX]; /* as written by the user: "instructions:u" */
	struct perf_event_attr attr;
	bool hardware;                  /* needs a PMU counter (hardware, cache, raw, cpu/../) */
};

/*
 * Resolves one name: the software events, perf's generic hardware and cache names,
 * raw rNNNN, PMU-specific names libpfm4 knows, with :u/:k/:h modifiers. On an unknown
 * name prints an error naming it and a hint with close names; returns -1.
 */
int perf_event_parse(const char *name, struct perf_event_desc *ev);
/*
 * A comma-separated list ("task-clock,instructions:u"); commas inside cpu/.../ are
 * kept. *evs is malloc'd. 0, or -1 with the error printed.
 */
int perf_event_parse_list(const char *list, struct perf_event_desc **evs, int *n);
/* What perf stat counts when no -e is given. */
extern const char *const perf_event_defaults;

/* The perf_event_open syscall; fd or -1 with errno. */
int perf_event_open_attr(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags);

/*
 * Why opening ev failed with err, as one short reason ("not supported on this
 * machine") and a hint line saying why and what to do (perf's evsel__open_strerror).
 * Both are written into the caller's buffers.
 */
void perf_event_strerror(const struct perf_event_desc *ev, int err, char *reason, size_t rlen,
			 char *hintbuf, size_t hlen);
/* Whether the kernel exposes a CPU PMU at all (/sys/bus/event_source/devices). */
bool perf_have_hw_pmu(void);
/* Up to max known event names close to name, for "did you mean". */
int perf_event_similar(const char *name, const char **out, int max);

#endif
