/* Loads latency.bpf.c and attaches START/END programs per pair (cookie = pair index). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/filter.h"
#include "bpf/corebtf.h"
#include "bpf/latency.h"
#include "bpf/mapdump.h"
#include "util/error.h"
#include "latency.skel.h"

struct lat_probe {
	struct latency *skel;
	struct bpf_link **links;
	int nlinks, npairs, ncpus;
	struct lat_hist *percpu;
	struct ring_buffer *rb;
	void (*on_query)(void *ctx, const struct lat_query_event *e);
	void *ctx;
};

void lat_probe_destroy(struct lat_probe *lp)
{
	if (!lp)
		return;
	for (int i = 0; i < lp->nlinks; i++)
		bpf_link__destroy(lp->links[i]);
	free(lp->links);
	ring_buffer__free(lp->rb);
	latency__destroy(lp->skel);
	free(lp->percpu);
	free(lp);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct lat_probe *lp = ctx;

	if (size >= sizeof(struct lat_query_event) && lp->on_query)
		lp->on_query(lp->ctx, data);
	return 0;
}

struct lat_probe *lat_probe_open(const struct lat_probe_opts *o)
{
	struct lat_probe *lp = calloc(1, sizeof(*lp));
	pid_t pid = attach_pid(o->target);
	int err;

	lp->npairs = o->npairs;
	lp->on_query = o->on_query;
	lp->ctx = o->ctx;
	lp->ncpus = libbpf_num_possible_cpus();
	lp->percpu = calloc(lp->ncpus, sizeof(struct lat_hist));
	lp->skel = latency__open_opts(core_btf_open_opts());
	if (!lp->skel) {
		error_errno("cannot open the latency BPF program");
		hint("'dbtap doctor' checks BPF support; run as root");
		goto fail;
	}
	TARGET_FILTER_RODATA(lp->skel, o->target);
	lp->skel->rodata->disp_kind = o->hist->kind;
	lp->skel->rodata->disp_min = o->hist->min;
	lp->skel->rodata->disp_step = o->hist->step ? o->hist->step : 1;
	lp->skel->rodata->disp_n = o->hist->n;
	lp->skel->rodata->disp_div = 1000;
	/* 4 MiB: ~15 000 statements between two reads 200 ms apart; drops are counted. */
	bpf_map__set_max_entries(lp->skel->maps.events, o->query ? 4 << 20 : 4096);
	err = latency__load(lp->skel);
	if (err) {
		errno = -err;
		error_errno("cannot load the latency BPF program");
		hint("run as root; 'dbtap -v latency ...' shows the verifier's log");
		goto fail;
	}
	if (target_filter_fill(bpf_map__fd(lp->skel->maps.filter_pids), o->target) < 0) {
		error("cannot fill the process filter");
		hint("the filter holds 1024 pids");
		goto fail;
	}
	if (o->query) {
		lp->rb = ring_buffer__new(bpf_map__fd(lp->skel->maps.events), handle_event, lp, NULL);
		if (!lp->rb) {
			error_errno("cannot set up the statement ring buffer");
			hint("run as root");
			goto fail;
		}
	}
	/* ENDs first: a START attached alone would fill the map with nothing to pair. */
	for (int i = 0; i < o->npairs; i++) {
		struct bpf_program *end_usdt = o->query ? lp->skel->progs.query_done :
							  lp->skel->progs.end_usdt;
		if (probe_attach(lp->skel->progs.end_uprobe, end_usdt, &o->ends[i], pid, i,
				 o->query, &lp->links, &lp->nlinks) < 0 ||
		    probe_attach(lp->skel->progs.start_uprobe, lp->skel->progs.start_usdt,
				 &o->starts[i], pid, i, false, &lp->links, &lp->nlinks) < 0)
			goto fail;
	}
	return lp;
fail:
	lat_probe_destroy(lp);
	return NULL;
}

int lat_probe_nlinks(const struct lat_probe *lp)
{
	return lp->nlinks;
}

int lat_probe_read(struct lat_probe *lp, int pair, struct lat_hist *out)
{
	__u32 key = pair;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(lp->skel->maps.hists), &key, lp->percpu))
		return -1;
	for (int c = 0; c < lp->ncpus; c++) {
		const struct lat_hist *h = &lp->percpu[c];
		out->count += h->count;
		out->sum_ns += h->sum_ns;
		out->unmatched += h->unmatched;
		out->dropped += h->dropped;
		for (unsigned i = 0; i < LL_BUCKETS; i++)
			out->ll[i] += h->ll[i];
		for (unsigned i = 0; i < DISP_SLOTS; i++)
			out->disp[i] += h->disp[i];
	}
	return 0;
}

int lat_probe_read_threads(struct lat_probe *lp, struct lat_key **keys, struct lat_thread **vals)
{
	return map_dump(bpf_map__fd(lp->skel->maps.threads), sizeof(**keys), sizeof(**vals),
			(void **)keys, (void **)vals);
}

int lat_probe_pending(struct lat_probe *lp)
{
	int fd = bpf_map__fd(lp->skel->maps.starts), n = 0;
	struct lat_key next, cur, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		n++;
		cur = next;
		prev = &cur;
	}
	return n;
}

int lat_probe_consume(struct lat_probe *lp)
{
	return lp->rb ? ring_buffer__consume(lp->rb) : 0;
}
