/* Loads waitspan.bpf.c at sched_switch for the traced threads; hands on its wait spans, and the waits still in progress. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/corebtf.h"
#include "bpf/filter.h"
#include "bpf/links.h"
#include "bpf/loader.h"
#include "bpf/mapdump.h"
#include "bpf/waitspan.h"
#include "target/proc.h"
#include "util/error.h"
#include "waitspan.skel.h"

struct waitspan_probe {
	struct waitspan *skel;
	struct links links;
	struct bpf_ring ring;
	int ncpus;
};

void waitspan_probe_destroy(struct waitspan_probe *p)
{
	if (!p)
		return;
	links_release(&p->links);
	bpf_loader_ring_free(&p->ring);
	waitspan__destroy(p->skel);
	free(p);
}

/* A wait span, checked, to the caller's callback. */
static bool deliver(const void *data, size_t len, bpf_ring_fn fn, void *arg)
{
	const struct waitspan_rec *r = data;

	if (len < sizeof(*r) || r->t1_ns < r->t0_ns)
		return false;
	if (fn)
		((void (*)(const struct waitspan_rec *, void *))fn)(r, arg);
	return true;
}

/* The markers' half: pgmark's maps shared, where the backends' rows are. */
static int marks_prepare(struct waitspan_probe *p, const struct pgmark_switch_opts *m)
{
	struct waitspan__rodata *ro = p->skel->rodata;
	int err;

	if ((err = bpf_map__reuse_fd(p->skel->maps.marks, m->fds.ring)) ||
	    (err = bpf_map__reuse_fd(p->skel->maps.mark_hists, m->fds.hists)) ||
	    (err = bpf_map__reuse_fd(p->skel->maps.mark_stats, m->fds.stats)) ||
	    (err = bpf_map__reuse_fd(p->skel->maps.mark_aborted, m->fds.aborted))) {
		errno = -err;
		error_errno("cannot share the markers' maps with the program at sched_switch");
		hint("this is a bug in dbtap: run with -v and report it");
		return -1;
	}
	BESTATUS_RODATA(p->skel, &m->cfg);
	ro->mk_records = m->records;
	ro->mk_statements = m->statements;
	return 0;
}

int waitspan_probe_open(struct waitspan_probe **out, const struct waitspan_probe_opts *o)
{
	struct waitspan_probe *p = calloc(1, sizeof(*p));
	struct attach_plan plan;

	*out = NULL;
	if (!p)
		return error("out of memory"), EXIT_FAIL;
	p->ncpus = libbpf_num_possible_cpus();
	p->skel = BPF_LOADER_OPEN(waitspan);
	if (!p->skel)
		goto fail;
	TARGET_FILTER_RODATA(p->skel, o->target);
	p->skel->rodata->wait_ptr_addr = o->ptr_addr;
	p->skel->rodata->wait_field_off = o->field_off;
	p->skel->rodata->idle_event = o->idle_event;
	p->skel->rodata->idle_class = o->idle_class;
	bpf_map__set_max_entries(p->skel->maps.pidbits, (proc_pid_max() + 63) / 64);
	bpf_map__set_max_entries(p->skel->maps.spanbits, (proc_pid_max() + 63) / 64);
	if (o->marks && marks_prepare(p, o->marks) < 0)
		goto fail;
	if (!o->marks)
		bpf_map__set_max_entries(p->skel->maps.mark_threads, 1);
	if (bpf_loader_load(p->skel->skeleton, "waitspan", o->target))
		goto fail;
	if (bpf_loader_ring(&p->ring, p->skel->maps.ring, deliver, "waitspan"))
		goto fail;
	attach_plan_init(&plan, o->target);
	attach_plan_prog(&plan, p->skel->progs.waitspan_switch, "to the sched_switch tracepoint");
	int rc = attach_plan_run(&plan, &p->links);
	attach_plan_free(&plan);
	if (rc)
		goto fail;
	*out = p;
	return EXIT_OK;
fail:
	waitspan_probe_destroy(p);
	return EXIT_FAIL;
}

int waitspan_probe_consume(struct waitspan_probe *p,
			   void (*fn)(const struct waitspan_rec *r, void *arg), void *arg)
{
	return bpf_loader_consume(&p->ring, (bpf_ring_fn)fn, arg);
}

int waitspan_probe_open_waits(struct waitspan_probe *p, uint64_t now_ns,
			      void (*fn)(const struct waitspan_rec *r, void *arg), void *arg)
{
	__u32 *k = NULL;
	struct waitspan_thread *v = NULL;
	int n = map_dump(bpf_map__fd(p->skel->maps.threads), sizeof(*k), sizeof(*v), (void **)&k,
			 (void **)&v), sent = 0;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!v[i].off || v[i].t0_ns > now_ns)
			continue;
		struct waitspan_rec r = { .pid = v[i].tgid, .tid = k[i], .event = v[i].event,
					  .flags = v[i].cont ? WAITSPAN_CONT : 0,
					  .t0_ns = v[i].t0_ns, .t1_ns = now_ns };
		fn(&r, arg);
		sent++;
	}
	free(k);
	free(v);
	return sent;
}

int waitspan_probe_stats(struct waitspan_probe *p, uint64_t st[WAITSPAN_ST_MAX])
{
	__u64 v[256];

	memset(st, 0, WAITSPAN_ST_MAX * sizeof(*st));
	if (p->ncpus > 256)
		return -1;
	for (__u32 i = 0; i < WAITSPAN_ST_MAX; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stats), &i, v) < 0)
			return -1;
		for (int c = 0; c < p->ncpus; c++)
			st[i] += v[c];
	}
	return 0;
}
