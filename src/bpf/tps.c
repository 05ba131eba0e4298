/* Loads tps.bpf.c, attaches it to the server's transaction probes, reads its maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/filter.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/mapdump.h"
#include "bpf/slothist.h"
#include "bpf/tps.h"
#include "pg/probes.h"
#include "target/probespec.h"
#include "util/error.h"
#include "tps.skel.h"

struct tps_probe {
	struct tps *skel;
	struct links links;
	struct probe_list probes; /* start, commit, abort: the cookies' order */
	int nsites;
	int ncpus;
	struct tps_totals *percpu;
};

void tps_probe_destroy(struct tps_probe *tp)
{
	if (!tp)
		return;
	links_release(&tp->links);
	tps__destroy(tp->skel);
	probe_list_free(&tp->probes);
	free(tp->percpu);
	free(tp);
}

struct tps_probe *tps_probe_open(const struct tps_probe_opts *o)
{
	const struct pg_probes *names = pg_probes_for(o->major);
	struct tps_probe *tp;
	int err;

	if (!names) {
		error("PostgreSQL %d is older than any version dbtap knows the probes of", o->major);
		hint("dbtap knows PostgreSQL 9 and later");
		return NULL;
	}
	tp = calloc(1, sizeof(*tp));
	if (probespec_resolve_usdt(o->binary, names->provider, names->txn_start, &tp->probes) ||
	    probespec_resolve_usdt(o->binary, names->provider, names->txn_commit, &tp->probes) ||
	    probespec_resolve_usdt(o->binary, names->provider, names->txn_abort, &tp->probes)) {
		tps_probe_destroy(tp);
		return NULL;
	}
	tp->ncpus = libbpf_num_possible_cpus();
	tp->percpu = calloc(tp->ncpus, sizeof(struct tps_totals));
	tp->skel = BPF_LOADER_OPEN(tps);
	if (!tp->skel)
		goto fail;
	TARGET_FILTER_RODATA(tp->skel, o->target);
	HISTREC_RODATA(tp->skel, o->hist);
	SLOTHIST_RODATA(tp->skel, o->slot_bounds, o->nslot_bounds, false); /* its own titles */
	struct attach_progs progs = { .multi = tp->skel->progs.tx_multi,
				      .single = tp->skel->progs.tx_uprobe };
	attach_progs_prepare(&progs);
	if (bpf_loader_load(tp->skel->skeleton, "tps", o->target))
		goto fail;

	/*
	 * pid -1: every process running the binary, backends forked later included; the
	 * filter keeps the target's. One link for the three probes' sites.
	 */
	struct attach_plan plan;
	attach_plan_init(&plan, o->target);
	plan.pid = -1;
	for (int i = 0; i < tp->probes.n; i++) {
		attach_plan_probe(&plan, &progs, &tp->probes.p[i], i, false);
		tp->nsites += tp->probes.p[i].nsites;
	}
	err = attach_plan_run(&plan, &tp->links);
	attach_plan_free(&plan);
	if (err)
		goto fail;
	return tp;
fail:
	tps_probe_destroy(tp);
	return NULL;
}

int tps_probe_nlinks(const struct tps_probe *tp)
{
	return tp->nsites;
}

int tps_probe_progs(const struct tps_probe *tp, int *fds, const char **names, int max)
{
	return bpf_loader_progs(tp->skel->obj, fds, names, max);
}

int tps_probe_bk_hists_fd(const struct tps_probe *tp)
{
	return bpf_map__fd(tp->skel->maps.bk_hists);
}

int tps_probe_hist_drops(const struct tps_probe *tp, struct slothist_drops *out)
{
	return slothist_drops_read(bpf_map__fd(tp->skel->maps.slothist_drops), tp->ncpus, out);
}

int tps_probe_read_totals(struct tps_probe *tp, struct tps_totals *out)
{
	__u32 key = 0;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(tp->skel->maps.totals), &key, tp->percpu))
		return -1;
	for (int c = 0; c < tp->ncpus; c++) {
		const struct tps_totals *t = &tp->percpu[c];
		out->starts += t->starts;
		out->commits += t->commits;
		out->aborts += t->aborts;
		out->txn_count += t->txn_count;
		out->txn_ns += t->txn_ns;
		out->cycles += t->cycles;
		out->cycle_ns += t->cycle_ns;
		for (unsigned i = 0; i < LL_BUCKETS; i++)
			out->ll[i] += t->ll[i];
		for (int i = 0; i < DISP_SLOTS; i++)
			out->disp[i] += t->disp[i];
	}
	return 0;
}

int tps_probe_read_backends(struct tps_probe *tp, struct tps_backend_entry **out)
{
	__u32 *tids = NULL;
	struct tps_backend *b = NULL;
	int n = map_dump(bpf_map__fd(tp->skel->maps.backends), sizeof(*tids), sizeof(*b),
			 (void **)&tids, (void **)&b);
	struct tps_backend_entry *v = n > 0 ? calloc(n, sizeof(*v)) : NULL;

	if (n > 0 && !v)
		n = -1;
	for (int i = 0; i < n; i++) {
		v[i].tid = tids[i];
		v[i].b = b[i];
	}
	free(tids);
	free(b);
	*out = v;
	return n;
}
