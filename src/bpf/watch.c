/* Loads the watch program, opens the per-CPU breakpoints and attaches it to each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/filter.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/mapdump.h"
#include "bpf/watch.h"
#include "perf/breakpoint.h"
#include "util/error.h"
#include "watch.skel.h"

struct watch_probe {
	struct watch *skel;
	struct breakpoint_set bps;
	struct bpf_link **links;
	int nlinks;
	struct bpf_ring ring;
	int (*on_event)(void *ctx, const struct watch_event *e);
	void *ctx;
};

/* An event record, checked, to the command's callback. */
static bool deliver(const void *data, size_t len, bpf_ring_fn fn, void *arg)
{
	if (len < sizeof(struct watch_event))
		return false;
	if (fn)
		((int (*)(void *, const struct watch_event *))fn)(arg, data);
	return true;
}

struct watch_probe *watch_probe_load(const struct watch_opts *o)
{
	struct watch_probe *w = calloc(1, sizeof(*w));
	int err;

	w->on_event = o->on_event;
	w->ctx = o->ctx;
	w->skel = BPF_LOADER_OPEN(watch);
	if (!w->skel)
		goto fail;
	w->skel->rodata->want_events = o->events;
	TARGET_FILTER_RODATA(w->skel, o->target);
	/* 1 MiB by default: ~26k writes between two reads 20 ms apart; drops are counted. */
	bpf_map__set_max_entries(w->skel->maps.events,
				 !o->events ? 4096 : o->ring_bytes ? o->ring_bytes : 1 << 20);

	if (bpf_loader_load(w->skel->skeleton, "watch", o->target))
		goto fail;
	if (o->events) {
		if (bpf_loader_ring(&w->ring, w->skel->maps.events, deliver, "watch event"))
			goto fail;
	}
	return w;
fail:
	err = errno;
	watch_probe_destroy(w);
	errno = err;
	return NULL;
}

int watch_probe_attach(struct watch_probe *w, uint64_t addr, int len, enum watch_mode mode)
{
	/* .bss, not .rodata: the address is only known after the program is loaded. */
	w->skel->bss->watch_addr = addr;
	w->skel->bss->watch_len = len;
	if (breakpoint_set_open(&w->bps, addr, len, mode) < 0)
		return -1;
	w->links = calloc(w->bps.n, sizeof(*w->links));
	int e;
	for (int i = 0; i < w->bps.n; i++) {
		w->links[i] = bpf_program__attach_perf_event(w->skel->progs.on_hit, w->bps.fds[i]);
		if (!w->links[i]) {
			e = errno;
			error("cannot attach the watch program to the breakpoint on cpu %d: %s",
			      w->bps.cpus[i], strerror(e));
			hint("run as root; 'dbtap doctor' checks perf-event BPF attachment");
			errno = e;
			goto fail;
		}
		w->nlinks++;
	}
	return 0;
fail:
	e = errno;
	bpf_loader_links_destroy(w->links, w->nlinks);
	w->links = NULL;
	w->nlinks = 0;
	breakpoint_set_close(&w->bps);
	errno = e;
	return -1;
}

int watch_probe_poll_events(struct watch_probe *w)
{
	if (!w->ring.rb)
		return 0;
	return bpf_loader_consume(&w->ring, (bpf_ring_fn)w->on_event, w->ctx);
}

int watch_probe_read_counts(struct watch_probe *w, struct watch_count **out)
{
	uint32_t *pids = NULL;
	uint64_t *counts = NULL;
	int n = map_dump(bpf_map__fd(w->skel->maps.counts), sizeof(*pids), sizeof(*counts),
			 (void **)&pids, (void **)&counts);
	struct watch_count *v = calloc(n > 0 ? n : 1, sizeof(*v));

	if (!v)
		n = -1;
	for (int i = 0; i < n; i++) {
		v[i].pid = pids[i];
		v[i].count = counts[i];
	}
	free(pids);
	free(counts);
	*out = v;
	return n;
}

int watch_probe_title(struct watch_probe *w, uint32_t pid, char *buf, size_t len)
{
	struct watch_title t;

	if (bpf_map_lookup_elem(bpf_map__fd(w->skel->maps.titles), &pid, &t) < 0 || !t.title[0])
		return -1;
	t.title[sizeof(t.title) - 1] = '\0';
	snprintf(buf, len, "%s", t.title);
	return 0;
}

void watch_probe_forget(struct watch_probe *w, uint32_t pid)
{
	bpf_map_delete_elem(bpf_map__fd(w->skel->maps.counts), &pid);
	bpf_map_delete_elem(bpf_map__fd(w->skel->maps.titles), &pid);
}

uint64_t watch_probe_unattributed(const struct watch_probe *w)
{
	return w->skel->bss->unrecorded;
}

uint64_t watch_probe_dropped(const struct watch_probe *w)
{
	return w->skel->bss->dropped;
}

uint64_t watch_probe_ignored(const struct watch_probe *w)
{
	return w->skel->bss->ignored;
}

int watch_probe_ncpus(const struct watch_probe *w)
{
	return w->bps.n;
}

void watch_probe_destroy(struct watch_probe *w)
{
	if (!w)
		return;
	/* Links first so no program runs on a closed event, then the breakpoints. */
	bpf_loader_links_destroy(w->links, w->nlinks);
	breakpoint_set_close(&w->bps);
	bpf_loader_ring_free(&w->ring);
	watch__destroy(w->skel);
	free(w);
}
