/* Loads profile.bpf.c, attaches it to sampling events (per CPU or per target thread) or a raw tracepoint, reads its maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/filter.h"
#include "bpf/mapdump.h"
#include "bpf/profile.h"
#include "perf/sample.h"
#include "target/proc.h"
#include "util/error.h"
#include "profile.skel.h"

struct profile_probe {
	struct profile *skel;
	struct sample_set events;
	struct bpf_link **links;
	int nlinks, caplinks;
	struct bpf_ring ring;
	int ncpus;
};

void profile_probe_destroy(struct profile_probe *p)
{
	if (!p)
		return;
	bpf_loader_links_destroy(p->links, p->nlinks);
	sample_set_close(&p->events);
	bpf_loader_ring_free(&p->ring);
	profile__destroy(p->skel);
	free(p);
}

/* A sample record, checked, to the caller's callback. */
static bool deliver(const void *data, size_t len, bpf_ring_fn fn, void *arg)
{
	if (len < sizeof(struct profile_rec))
		return false;
	if (fn)
		((void (*)(const struct profile_rec *, void *))fn)(data, arg);
	return true;
}

static int sample_open_error(const struct perf_event_desc *ev, int err)
{
	char reason[128], h[512];

	perf_event_strerror(ev, err, reason, sizeof(reason), h, sizeof(h));
	error("cannot sample on '%s': %s", ev->name, reason);
	hint("%s", h);
	if (ev->hardware)
		hint("without -e, profile samples on cpu-clock, which needs no PMU");
	return -1;
}

static int attach_one(struct profile_probe *p, const struct perf_event_desc *ev, int i)
{
	const struct sample_event *e = &p->events.ev[i];
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = e->tid > 0 ? e->tid : 0);
	struct bpf_link *l = bpf_program__attach_perf_event_opts(p->skel->progs.profile_perf,
								 e->fd, &po);
	if (!l) {
		if (e->tid > 0)
			error_errno("cannot attach the profile program to '%s' on thread %d",
				    ev->name, e->tid);
		else
			error_errno("cannot attach the profile program to '%s' on cpu %d",
				    ev->name, e->cpu);
		hint("run as root; 'dbtap doctor' checks BPF support");
		return -1;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

static int grow_links(struct profile_probe *p)
{
	if (p->events.n <= p->caplinks)
		return 0;
	struct bpf_link **l = realloc(p->links, p->events.cap * sizeof(*l));
	if (!l)
		return error("out of memory");
	p->links = l;
	p->caplinks = p->events.cap;
	return 0;
}

static bool opened(const struct profile_probe *p, pid_t tid)
{
	for (int i = 0; i < p->events.n; i++)
		if (p->events.ev[i].tid == tid)
			return true;
	return false;
}

/*
 * One event per thread of each target process, inherited by the threads they create
 * (-p), or on the one thread (-t). The threads are listed again after each round of
 * opening: one created before its creator's event was open has no copy of it. A
 * round that finds no thread without an event ends it, and from then on every new
 * thread is created by a thread whose event (with the program) is open. A thread that
 * does carry an inherited copy and gets an event of its own is entered in own_event
 * first, so that the copy's samples stop counting before its own start.
 */
static int attach_threads(struct profile_probe *p, const struct profile_opts *o)
{
	const struct target *t = o->t;
	int fd = bpf_map__fd(p->skel->maps.own_event), added;
	__u8 one = 1;

	do {
		added = 0;
		for (int i = 0; i < t->npids; i++) {
			pid_t *tids = NULL;
			int n = 0;

			if (t->kind == TARGET_TID) {
				tids = malloc(sizeof(*tids));
				if (tids)
					tids[n++] = t->tid;
			} else {
				n = proc_threads(t->pids[i], &tids);
			}
			if (n < 0 || (n > 0 && !tids)) {
				free(tids);
				if (n == -1 && !proc_exists(t->pids[i]))
					continue; /* gone: the run loop says so */
				return error("cannot list the threads of pid %d", t->pids[i]);
			}
			for (int k = 0; k < n; k++) {
				__u32 tid = tids[k];
				int err;

				if (opened(p, tids[k]))
					continue;
				if (bpf_map_update_elem(fd, &tid, &one, BPF_ANY) < 0) {
					free(tids);
					error_errno("cannot sample thread %d of pid %d", tids[k], t->pids[i]);
					return hint("the profile keeps 65536 threads at most"), -1;
				}
				err = sample_set_add_thread(&p->events, &o->ev->attr, tids[k],
							    t->kind != TARGET_TID);
				if (err == ESRCH) {
					bpf_map_delete_elem(fd, &tid); /* exited in between */
					continue;
				}
				if (err) {
					free(tids);
					return sample_open_error(o->ev, err);
				}
				if (grow_links(p) || attach_one(p, o->ev, p->events.n - 1)) {
					free(tids);
					return -1;
				}
				added++;
			}
			free(tids);
			if (t->kind == TARGET_TID)
				break;
		}
	} while (added);
	if (!p->events.n) {
		error("no thread of %s left to sample", target_describe(t));
		return hint("the target exited before the profile started"), -1;
	}
	return 0;
}

static int attach_events(struct profile_probe *p, const struct perf_event_desc *ev)
{
	int err = sample_set_open(&p->events, &ev->attr);

	if (err)
		return sample_open_error(ev, err);
	if (grow_links(p))
		return -1;
	for (int i = 0; i < p->events.n; i++)
		if (attach_one(p, ev, i))
			return -1;
	return 0;
}

static int attach_tracepoint(struct profile_probe *p, const char *name)
{
	struct bpf_link *l;

	p->links = calloc(1, sizeof(*p->links));
	if (!p->links)
		return error("out of memory");
	l = bpf_program__attach_raw_tracepoint(p->skel->progs.profile_raw_tp, name);
	if (!l) {
		error_errno("cannot attach to tracepoint '%s'", name);
		hint("run as root; 'dbtap doctor' checks BPF support");
		return -1;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

int profile_probe_open(struct profile_probe **out, const struct profile_opts *o)
{
	struct profile_probe *p = calloc(1, sizeof(*p));
	bool per_thread;

	*out = NULL;
	if (!p)
		return error("out of memory"), EXIT_FAIL;
	p->ncpus = libbpf_num_possible_cpus();
	p->skel = BPF_LOADER_OPEN(profile);
	if (!p->skel)
		goto fail;
	TARGET_FILTER_RODATA(p->skel, o->t);
	p->skel->rodata->want_user = o->user;
	p->skel->rodata->want_kernel = o->kernel;
	p->skel->rodata->ring_samples = o->ring;
	per_thread = !o->tracepoint && o->t &&
		     (o->t->kind == TARGET_PIDS || o->t->kind == TARGET_TID);
	p->skel->rodata->per_thread = per_thread;
	if (!per_thread)
		bpf_map__set_max_entries(p->skel->maps.own_event, 1); /* never used then */
	if (o->max_keys)
		bpf_map__set_max_entries(p->skel->maps.counts, o->max_keys);
	if (o->max_stacks) {
		bpf_map__set_max_entries(p->skel->maps.ustacks, o->max_stacks);
		bpf_map__set_max_entries(p->skel->maps.kstacks, o->max_stacks / 2 + 1);
	}
	/* Only the program that will be attached is loaded. */
	bpf_program__set_autoload(p->skel->progs.profile_perf, !o->tracepoint);
	bpf_program__set_autoload(p->skel->progs.profile_raw_tp, !!o->tracepoint);
	if (bpf_loader_load(p->skel->skeleton, "profile", o->t))
		goto fail;
	if (bpf_loader_ring(&p->ring, p->skel->maps.ring, deliver, "profile"))
		goto fail;
	if (o->tracepoint ? attach_tracepoint(p, o->tracepoint) :
	    per_thread	  ? attach_threads(p, o) :
			    attach_events(p, o->ev))
		goto fail;
	*out = p;
	return EXIT_OK;
fail:
	profile_probe_destroy(p);
	return EXIT_FAIL;
}

int profile_probe_consume(struct profile_probe *p,
			  void (*fn)(const struct profile_rec *r, void *arg), void *arg)
{
	return bpf_loader_consume(&p->ring, (bpf_ring_fn)fn, arg);
}

int profile_probe_read(struct profile_probe *p, struct profile_counts *c)
{
	void *keys = NULL, *vals = NULL;
	__u64 *percpu = calloc(p->ncpus, sizeof(__u64));
	int n;

	memset(c, 0, sizeof(*c));
	if (!percpu)
		return -1;
	n = map_dump(bpf_map__fd(p->skel->maps.counts), sizeof(struct profile_key),
		     sizeof(__u64), &keys, &vals);
	if (n < 0) {
		free(percpu);
		return -1;
	}
	c->keys = keys;
	c->counts = vals;
	c->n = n;
	for (__u32 i = 0; i < PROFILE_ST_MAX; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stats), &i, percpu) < 0)
			continue;
		for (int cpu = 0; cpu < p->ncpus; cpu++)
			c->stats[i] += percpu[cpu];
	}
	free(percpu);
	return 0;
}

int profile_probe_stats(struct profile_probe *p, __u64 stats[PROFILE_ST_MAX])
{
	__u64 *percpu = calloc(p->ncpus, sizeof(__u64));

	memset(stats, 0, PROFILE_ST_MAX * sizeof(*stats));
	if (!percpu)
		return -1;
	for (__u32 i = 0; i < PROFILE_ST_MAX; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stats), &i, percpu) < 0)
			continue;
		for (int cpu = 0; cpu < p->ncpus; cpu++)
			stats[i] += percpu[cpu];
	}
	free(percpu);
	return 0;
}

/* Deletes every entry of a hash map, key by key (the map is being written meanwhile). */
static int clear_map(int fd, size_t key_size)
{
	char key[64], next[64];
	int n = 0;

	if (key_size > sizeof(key))
		return -1;
	/* the first key each time: deleting the current one would lose the iteration's place */
	while (bpf_map_get_next_key(fd, NULL, next) == 0 && n < 10000000) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key) < 0)
			break;
		n++;
	}
	return n;
}

int profile_probe_clear_stacks(struct profile_probe *p)
{
	int a = clear_map(bpf_map__fd(p->skel->maps.ustacks), sizeof(__u64));
	int b = clear_map(bpf_map__fd(p->skel->maps.kstacks), sizeof(__u64));
	int c = clear_map(bpf_map__fd(p->skel->maps.counts), sizeof(struct profile_key));

	return a < 0 || b < 0 || c < 0 ? -1 : a + b;
}

void profile_counts_free(struct profile_counts *c)
{
	free(c->keys);
	free(c->counts);
	memset(c, 0, sizeof(*c));
}

int profile_probe_stack(struct profile_probe *p, bool kernel, __u64 hash, struct profile_stack *s)
{
	struct bpf_map *m = kernel ? p->skel->maps.kstacks : p->skel->maps.ustacks;

	if (bpf_map_lookup_elem(bpf_map__fd(m), &hash, s) < 0)
		return -1;
	if (s->len > PROFILE_MAX_DEPTH)
		s->len = PROFILE_MAX_DEPTH;
	return 0;
}

int profile_probe_thread(struct profile_probe *p, __u32 tid, struct profile_thread *t)
{
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.threads), &tid, t) < 0)
		return -1;
	t->comm[PROFILE_COMM_LEN - 1] = '\0';
	return 0;
}
