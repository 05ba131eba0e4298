/* Loads count.bpf.c and attaches it to every site of every probe, the probe's index as cookie. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/count.h"
#include "bpf/mapdump.h"
#include "bpf/filter.h"
#include "util/error.h"
#include "count.skel.h"

struct count_probe {
	struct count *skel;
	struct links links;
	int nprobes, nsites, ncpus;
	uint64_t *percpu;
};

void count_probe_destroy(struct count_probe *cp)
{
	if (!cp)
		return;
	links_release(&cp->links);
	count__destroy(cp->skel);
	free(cp->percpu);
	free(cp);
}

struct count_probe *count_probe_open(struct target *t, const struct probe_list *probes, bool by_pid,
				     bool empty)
{
	struct count_probe *cp = calloc(1, sizeof(*cp));
	int err;

	if (!cp) {
		error("out of memory");
		return NULL;
	}
	cp->nprobes = probes->n;
	cp->ncpus = libbpf_num_possible_cpus();
	cp->percpu = cp->ncpus > 0 ? calloc(cp->ncpus, sizeof(uint64_t)) : NULL;
	if (!cp->percpu) {
		error("out of memory");
		goto fail;
	}
	cp->skel = BPF_LOADER_OPEN(count);
	if (!cp->skel)
		goto fail;
	TARGET_FILTER_RODATA(cp->skel, t);
	cp->skel->rodata->by_pid = by_pid;
	struct attach_progs progs = { .multi = cp->skel->progs.count_multi,
				      .single = cp->skel->progs.count_uprobe };
	struct attach_progs unused = { .multi = cp->skel->progs.empty_multi,
				       .single = cp->skel->progs.empty_uprobe };
	if (empty) {
		struct attach_progs x = progs;
		progs = unused;
		unused = x;
	}
	attach_progs_prepare(&progs);
	bpf_program__set_autoload(unused.multi, false);
	bpf_program__set_autoload(unused.single, false);
	if (bpf_loader_load(cp->skel->skeleton, "count", t))
		goto fail;
	struct attach_plan plan;
	attach_plan_init(&plan, t);
	for (int i = 0; i < probes->n; i++) {
		const struct probe *p = &probes->p[i];
		attach_plan_probe(&plan, &progs, p, i, false);
		cp->nsites += p->kind == PROBE_USDT ? p->nsites : 1;
	}
	err = attach_plan_run(&plan, &cp->links);
	attach_plan_free(&plan);
	if (err)
		goto fail;
	return cp;
fail:
	count_probe_destroy(cp);
	return NULL;
}

int count_probe_nsites(const struct count_probe *cp)
{
	return cp->nsites;
}

int count_probe_read(struct count_probe *cp, uint64_t *out)
{
	int fd = bpf_map__fd(cp->skel->maps.hits);

	for (__u32 i = 0; i < (__u32)cp->nprobes; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, cp->percpu))
			return -1;
		for (int c = 0; c < cp->ncpus; c++)
			out[i] += cp->percpu[c];
	}
	return 0;
}

int count_probe_read_pids(struct count_probe *cp, struct count_key **keys, struct count_val **vals)
{
	return map_dump(bpf_map__fd(cp->skel->maps.pid_hits), sizeof(**keys), sizeof(**vals),
			(void **)keys, (void **)vals);
}
