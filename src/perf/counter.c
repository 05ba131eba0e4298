/* perf_event_open counting per process or thread, multiplex scaling, derived figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "perf/counter.h"
#include "pg/cluster.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"

struct counter_value counter_delta(const struct counter_value *now,
				   const struct counter_value *prev)
{
	struct counter_value d;
	d.value = now->value >= prev->value ? now->value - prev->value : 0;
	d.enabled = now->enabled >= prev->enabled ? now->enabled - prev->enabled : 0;
	d.running = now->running >= prev->running ? now->running - prev->running : 0;
	return d;
}

bool counter_scale(const struct counter_value *d, double *scaled, double *pct)
{
	if (!d->enabled) {
		/* a task's counters advance only while it runs: it did nothing, a true 0 */
		*scaled = (double)d->value;
		*pct = 100.0;
		return true;
	}
	if (!d->running) {
		*scaled = 0;
		*pct = 0;
		return false;
	}
	if (d->running >= d->enabled) {
		*scaled = (double)d->value;
		*pct = 100.0;
	} else {
		*scaled = (double)d->value * ((double)d->enabled / (double)d->running);
		*pct = 100.0 * (double)d->running / (double)d->enabled;
	}
	return true;
}

void counter_set_init(struct counter_set *s, const struct perf_event_desc *evs, int nev)
{
	memset(s, 0, sizeof(*s));
	s->evs = evs;
	s->nev = nev;
	s->err = calloc(nev, sizeof(*s->err));
}

void counter_set_free(struct counter_set *s)
{
	for (int u = 0; u < s->nunits; u++) {
		struct counter_unit *cu = &s->units[u];
		for (int i = 0; i < cu->nthreads * s->nev; i++)
			if (cu->fds[i] >= 0)
				close(cu->fds[i]);
		free(cu->fds);
		free(cu->prev);
		free(cu->cur);
	}
	free(s->units);
	free(s->err);
	memset(s, 0, sizeof(*s));
}

void counter_set_drop_last(struct counter_set *s)
{
	struct counter_unit *cu;

	if (!s->nunits)
		return;
	cu = &s->units[--s->nunits];
	for (int i = 0; i < cu->nthreads * s->nev; i++)
		if (cu->fds[i] >= 0)
			close(cu->fds[i]);
	free(cu->fds);
	free(cu->prev);
	free(cu->cur);
}

static struct counter_unit *unit_new(struct counter_set *s, pid_t pid, pid_t tid, int nthreads)
{
	struct counter_unit *nu = realloc(s->units, (s->nunits + 1) * sizeof(*nu));
	if (!nu)
		return NULL;
	s->units = nu;
	struct counter_unit *cu = &nu[s->nunits++];
	memset(cu, 0, sizeof(*cu));
	cu->pid = pid;
	cu->tid = tid;
	cu->nthreads = nthreads;
	cu->fds = malloc(nthreads * s->nev * sizeof(int));
	cu->prev = calloc(s->nev, sizeof(*cu->prev));
	cu->cur = calloc(s->nev, sizeof(*cu->cur));
	if (!cu->fds || !cu->prev || !cu->cur)
		return NULL;
	for (int i = 0; i < nthreads * s->nev; i++)
		cu->fds[i] = -1;
	return cu;
}

/* Opens every event on one thread into fds[0..nev). 0, 1 when the thread is gone, -1. */
static int open_thread(struct counter_set *s, pid_t tid, int *fds)
{
	int opened = 0;

	for (int e = 0; e < s->nev; e++) {
		if (s->err[e])
			continue;
		struct perf_event_attr attr = s->evs[e].attr;
		attr.size = sizeof(attr);
		attr.disabled = 1;
		attr.inherit = 1;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		int fd = perf_event_open_attr(&attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			fds[e] = fd;
			opened++;
			continue;
		}
		if (errno == ESRCH)
			return 1;
		if (errno == EMFILE || errno == ENFILE) {
			error_errno("cannot open counter '%s' on thread %d", s->evs[e].name, tid);
			hint("one counter per event and thread: raise 'ulimit -n' or count "
			     "fewer events");
			return -1;
		}
		s->err[e] = errno ? errno : EINVAL;
	}
	return 0;
}

int counter_set_add_thread(struct counter_set *s, pid_t tid)
{
	pid_t tgid = proc_tgid(tid);
	if (tgid < 0) {
		error("thread %d does not exist", tid);
		hint("list a process's threads with 'ls /proc/PID/task'");
		return -1;
	}
	struct counter_unit *cu = unit_new(s, tgid, tid, 1);
	if (!cu)
		return error("out of memory");
	int r = open_thread(s, tid, cu->fds);
	if (r > 0) {
		error("thread %d exited before its counters could be opened", tid);
		hint("pick a running thread: 'ls /proc/PID/task'");
		return -1;
	}
	return r;
}

int counter_set_add_process(struct counter_set *s, pid_t pid, bool per_thread)
{
	pid_t *tids = NULL;
	int n = proc_threads(pid, &tids);

	if (n <= 0) {
		free(tids);
		return 1;
	}
	if (per_thread) {
		for (int i = 0; i < n; i++) {
			struct counter_unit *cu = unit_new(s, pid, tids[i], 1);
			if (!cu) {
				free(tids);
				return error("out of memory");
			}
			int r = open_thread(s, tids[i], cu->fds);
			if (r < 0) {
				free(tids);
				return -1;
			}
			if (r > 0) /* a thread that exited meanwhile is not an error */
				counter_set_drop_last(s);
		}
		free(tids);
		return 0;
	}
	struct counter_unit *cu = unit_new(s, pid, 0, n);
	if (!cu) {
		free(tids);
		return error("out of memory");
	}
	int alive = 0;
	for (int i = 0; i < n; i++) {
		int r = open_thread(s, tids[i], cu->fds + i * s->nev);
		if (r < 0) {
			free(tids);
			return -1;
		}
		alive += r == 0;
	}
	free(tids);
	if (!alive) {
		counter_set_drop_last(s);
		return 1;
	}
	return 0;
}

void counter_set_enable(struct counter_set *s)
{
	for (int u = 0; u < s->nunits; u++)
		for (int i = 0; i < s->units[u].nthreads * s->nev; i++)
			if (s->units[u].fds[i] >= 0)
				ioctl(s->units[u].fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

void counter_set_read(struct counter_set *s)
{
	for (int u = 0; u < s->nunits; u++) {
		struct counter_unit *cu = &s->units[u];
		for (int e = 0; e < s->nev; e++) {
			struct counter_value sum = { 0, 0, 0 };
			for (int t = 0; t < cu->nthreads; t++) {
				int fd = cu->fds[t * s->nev + e];
				uint64_t buf[3];
				if (fd < 0)
					continue;
				/* an exited thread's event still reads its final count */
				if (read(fd, buf, sizeof(buf)) != sizeof(buf))
					continue;
				sum.value += buf[0];
				/* threads run side by side: the time is the longest, not the sum */
				if (buf[1] > sum.enabled)
					sum.enabled = buf[1];
				if (buf[2] > sum.running)
					sum.running = buf[2];
			}
			cu->prev[e] = cu->cur[e];
			cu->cur[e] = sum;
		}
		cu->gone = !proc_exists(cu->tid ? cu->tid : cu->pid);
	}
}

int counter_set_counted(const struct counter_set *s)
{
	int n = 0;
	for (int e = 0; e < s->nev; e++)
		n += !s->err[e];
	return s->nunits ? n : 0;
}

static const char *const metric_keys[METRIC_NR] = {
	"cpus_utilized", "ipc", "branch_miss_pct", "cache_miss_pct",
};
static const char *const metric_labels[METRIC_NR] = {
	"CPUs utilized", "insn per cycle", "of all branches", "of all cache refs",
};

const char *counter_metric_key(enum counter_metric m)
{
	return metric_keys[m];
}

const char *counter_metric_label(enum counter_metric m)
{
	return metric_labels[m];
}

bool counter_event_is_clock(const struct perf_event_desc *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		ev->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Index of the first counted event of this type/config, -1 when none. */
static int find_ev(const struct perf_event_desc *evs, const bool *counted, int nev,
		   __u32 type, __u64 config)
{
	for (int i = 0; i < nev; i++)
		if (counted[i] && evs[i].attr.type == type && evs[i].attr.config == config)
			return i;
	return -1;
}

static void ratio(struct counter_metrics *m, enum counter_metric k, const double *vals,
		  int num, int den, double mult)
{
	if (num < 0 || den < 0 || vals[den] <= 0)
		return;
	m->v[k] = vals[num] / vals[den] * mult;
	m->ok[k] = true;
}

void counter_metrics_compute(const struct perf_event_desc *evs, const double *vals,
			     const bool *counted, int nev, double seconds,
			     struct counter_metrics *m)
{
	memset(m, 0, sizeof(*m));
	int tc = find_ev(evs, counted, nev, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	if (tc >= 0 && seconds > 0) {
		m->v[METRIC_CPUS_UTILIZED] = vals[tc] / (seconds * 1e9);
		m->ok[METRIC_CPUS_UTILIZED] = true;
	}
	ratio(m, METRIC_IPC, vals,
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES), 1);
	ratio(m, METRIC_BRANCH_MISS, vals,
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES),
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
	      100);
	ratio(m, METRIC_CACHE_MISS, vals,
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES),
	      find_ev(evs, counted, nev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES),
	      100);
}

int counter_set_open_target(struct counter_set *s, struct target *t, bool per_thread)
{
	int r;

	switch (t->kind) {
	case TARGET_TID:
		return counter_set_add_thread(s, t->tid) ? EXIT_FAIL : 0;
	case TARGET_PIDS:
		for (int i = 0; i < t->npids; i++) {
			r = counter_set_add_process(s, t->pids[i], per_thread);
			if (r > 0) {
				error("process %d exited before its counters could be opened",
				      t->pids[i]);
				hint("check the pid with 'dbtap pg' or ps");
			}
			if (r)
				return EXIT_FAIL;
		}
		return 0;
	case TARGET_PG:
		/* the postmaster's inherited counters take every process forked from now on */
		r = counter_set_add_process(s, t->pg.postmaster, per_thread);
		if (r > 0) {
			error("the postmaster (pid %d) is gone", t->pg.postmaster);
			hint("'dbtap pg' lists the clusters running now");
		}
		if (r)
			return EXIT_FAIL;
		pg_cluster_refresh_procs(&t->pg);
		for (int i = 0; i < t->pg.nprocs; i++) {
			pid_t pid = t->pg.procs[i].pid;
			if (pid == t->pg.postmaster)
				continue;
			/* one that exits while its siblings are opened (1) is not an error */
			if (counter_set_add_process(s, pid, per_thread) < 0)
				return EXIT_FAIL;
		}
		return 0;
	default:
		return EXIT_USAGE;
	}
}
