/* Loads profile.bpf.c, attaches it to a sampling event on every CPU or to a raw tracepoint, reads its maps. */
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
#include "util/error.h"
#include "profile.skel.h"

struct profile_probe {
	struct profile *skel;
	struct sample_set events;
	struct bpf_link **links;
	int nlinks;
	struct ring_buffer *rb;
	void (*fn)(const struct profile_rec *, void *);
	void *arg;
	int nrec;
	int ncpus;
};

void profile_probe_destroy(struct profile_probe *p)
{
	if (!p)
		return;
	bpf_loader_links_destroy(p->links, p->nlinks);
	sample_set_close(&p->events);
	ring_buffer__free(p->rb);
	profile__destroy(p->skel);
	free(p);
}

static int on_rec(void *ctx, void *data, size_t len)
{
	struct profile_probe *p = ctx;

	if (len < sizeof(struct profile_rec))
		return 0;
	p->nrec++;
	if (p->fn)
		p->fn(data, p->arg);
	return 0;
}

static int attach_events(struct profile_probe *p, const struct perf_event_desc *ev)
{
	int err = sample_set_open(&p->events, &ev->attr);

	if (err) {
		char reason[128], h[512];
		perf_event_strerror(ev, err, reason, sizeof(reason), h, sizeof(h));
		error("cannot sample on '%s': %s", ev->name, reason);
		hint("%s", h);
		if (ev->hardware)
			hint("without -e, profile samples on cpu-clock, which needs no PMU");
		return -1;
	}
	p->links = calloc(p->events.n, sizeof(*p->links));
	if (!p->links)
		return error("out of memory");
	for (int i = 0; i < p->events.n; i++) {
		struct bpf_link *l = bpf_program__attach_perf_event(p->skel->progs.profile_perf,
								    p->events.fds[i]);
		if (!l) {
			error_errno("cannot attach the profile program to '%s' on cpu %d",
				    ev->name, p->events.cpus[i]);
			hint("run as root; 'dbtap doctor' checks BPF support");
			return -1;
		}
		p->links[p->nlinks++] = l;
	}
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
	p->rb = bpf_loader_ring(p->skel->maps.ring, on_rec, p, "profile");
	if (!p->rb)
		goto fail;
	if (o->tracepoint ? attach_tracepoint(p, o->tracepoint) : attach_events(p, o->ev))
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
	p->fn = fn;
	p->arg = arg;
	p->nrec = 0;
	if (ring_buffer__consume(p->rb) < 0)
		return -1;
	return p->nrec;
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
