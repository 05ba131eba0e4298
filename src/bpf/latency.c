/* Loads latency.bpf.c and attaches START/END programs per pair (cookie = pair index). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/filter.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/stathash.h"
#include "bpf/tracepoint.h"
#include "bpf/latency.h"
#include "bpf/mapdump.h"
#include "bpf/slothist.h"
#include "target/proc.h"
#include "util/error.h"
#include "latency.skel.h"

struct lat_probe {
	struct latency *skel;
	struct links links;
	int npairs, ncpus, nsites;
	bool bestatus; /* the PgBackendStatus path */
	bool recv;     /* with the backends' socket reads (sock_recv_length) */
	struct lat_hist *percpu;
};

void lat_probe_destroy(struct lat_probe *lp)
{
	if (!lp)
		return;
	links_release(&lp->links);
	latency__destroy(lp->skel);
	free(lp->percpu);
	free(lp);
}

struct lat_probe *lat_probe_open(const struct lat_probe_opts *o)
{
	struct lat_probe *lp = calloc(1, sizeof(*lp));
	struct attach_plan plan;
	int err;

	if (!lp) {
		error("out of memory");
		return NULL;
	}
	lp->npairs = o->npairs;
	lp->ncpus = libbpf_num_possible_cpus();
	lp->percpu = lp->ncpus > 0 ? calloc(lp->ncpus, sizeof(struct lat_hist)) : NULL;
	if (!lp->percpu) {
		error("out of memory");
		goto fail;
	}
	lp->skel = BPF_LOADER_OPEN(latency);
	if (!lp->skel)
		goto fail;
	TARGET_FILTER_RODATA(lp->skel, o->target);
	HISTREC_RODATA(lp->skel, o->hist);
	lp->skel->rodata->raw_text = o->raw;
	lp->skel->rodata->per_thread = !o->no_threads;
	if (o->no_threads)
		bpf_map__set_max_entries(lp->skel->maps.threads, 1);
	if (o->max_starts > 0)
		bpf_map__set_max_entries(lp->skel->maps.starts, (__u32)o->max_starts);
	SLOTHIST_RODATA(lp->skel, o->slot_bounds, o->query ? o->nslot_bounds : 0, o->bk_titles);
	bpf_map__set_max_entries(lp->skel->maps.stmt_hists,
				 o->query && o->nslot_bounds > 0 && o->stmt_hists > 0 ?
				 (__u32)o->stmt_hists : 1);
	/* Pairs other than query need neither the statement maps nor bpf_loop (5.17). */
	if (!o->query) {
		bpf_map__set_max_entries(lp->skel->maps.stmts, 1);
		bpf_map__set_max_entries(lp->skel->maps.texts, 1);
		bpf_program__set_autoload(lp->skel->progs.query_done, false);
	}
	struct attach_progs starts = { .multi = lp->skel->progs.start_multi,
				       .single = lp->skel->progs.start_uprobe };
	struct attach_progs ends = { .multi = lp->skel->progs.end_multi,
				     .single = lp->skel->progs.end_uprobe };
	if (o->query) {
		/* query__done's END reads the statement: libbpf's USDT support, not these */
		bpf_program__set_autoload(ends.multi, false);
		bpf_program__set_autoload(ends.single, false);
		ends = (struct attach_progs){ .usdt = lp->skel->progs.query_done };
	}
	struct attach_progs aborts = { .multi = lp->skel->progs.abort_multi,
				       .single = lp->skel->progs.abort_uprobe };
	lp->bestatus = o->query && o->bestatus;
	/* the task-address cache of waitword.bpf.h: only the thread bits are used here */
	bpf_map__set_max_entries(lp->skel->maps.taskcache, 1);
	if (lp->bestatus) {
		BESTATUS_RODATA(lp->skel, o->bestatus);
		/* a bit per thread id; ids above a pid_max raised later go through the filter */
		bpf_map__set_max_entries(lp->skel->maps.pidbits, (proc_pid_max() + 63) / 64);
		bpf_map__set_max_entries(lp->skel->maps.starts, 1);
		bpf_program__set_autoload(lp->skel->progs.start_multi, false);
		bpf_program__set_autoload(lp->skel->progs.start_uprobe, false);
		bpf_program__set_autoload(lp->skel->progs.end_multi, false);
		bpf_program__set_autoload(lp->skel->progs.end_uprobe, false);
		bpf_program__set_autoload(lp->skel->progs.query_done, false);
		/* without it (before 6.4) only the switch-outs tell: docs/latency.md */
		lp->recv = tracepoint_named("sock_recv_length");
		if (!lp->recv)
			bpf_program__set_autoload(lp->skel->progs.stmt_recv, false);
		else
			bpf_map__set_max_entries(lp->skel->maps.recvskip, (proc_pid_max() + 63) / 64);
		lp->skel->rodata->recv_looks = lp->recv;
		attach_progs_prepare(&aborts);
		/* the hash in the scheduler's path: eight bytes a step (stmthash.bpf.h) */
		lp->skel->rodata->stmt_wide = !o->raw;
	} else {
		bpf_program__set_autoload(lp->skel->progs.stmt_look, false);
		bpf_program__set_autoload(lp->skel->progs.stmt_switch, false);
		bpf_program__set_autoload(lp->skel->progs.stmt_recv, false);
		bpf_program__set_autoload(lp->skel->progs.stmt_exit, false);
		bpf_program__set_autoload(aborts.multi, false);
		bpf_program__set_autoload(aborts.single, false);
		bpf_map__set_max_entries(lp->skel->maps.backends, 1);
	}
	if (!lp->bestatus) {
		attach_progs_prepare(&starts);
		attach_progs_prepare(&ends);
	}
	stathash_dfa_fill((__u16 *)lp->skel->rodata->stathash_dfa);
	if (bpf_loader_load(lp->skel->skeleton, "latency", o->target))
		goto fail;
	/* before attaching: the tracepoints' programs tail-call into stmt_look */
	if (lp->bestatus && bpf_loader_tail_call(lp->skel->maps.look_prog,
						 lp->skel->progs.stmt_look, "latency"))
		goto fail;
	attach_plan_init(&plan, o->target);
	if (lp->bestatus) {
		/* statements begun before this are not counted: their start was not seen */
		lp->skel->bss->bestatus_since_us = bestatus_pg_now_us();
		/* the abort first: a failed statement is known before its end is looked at */
		attach_plan_probe(&plan, &aborts, o->abort, 0, false);
		attach_plan_prog(&plan, lp->skel->progs.stmt_exit, "sched_process_exit");
		attach_plan_prog(&plan, lp->skel->progs.stmt_switch, "sched_switch");
		if (lp->recv)
			attach_plan_prog(&plan, lp->skel->progs.stmt_recv, "sock_recv_length");
		/* the abort's sites and the tracepoints, as wait counts its own */
		lp->nsites = probe_nsites(o->abort) + 2 + lp->recv;
	} else {
		/* ENDs first: a START attached alone would fill the map with nothing to pair. */
		for (int i = 0; i < o->npairs; i++)
			attach_plan_probe(&plan, &ends, &o->ends[i], i, o->query);
		for (int i = 0; i < o->npairs; i++)
			attach_plan_probe(&plan, &starts, &o->starts[i], i, false);
		for (int i = 0; i < o->npairs; i++)
			lp->nsites += probe_nsites(&o->starts[i]) + probe_nsites(&o->ends[i]);
	}
	err = attach_plan_run(&plan, &lp->links);
	attach_plan_free(&plan);
	if (err)
		goto fail;
	return lp;
fail:
	lat_probe_destroy(lp);
	return NULL;
}

int lat_probe_nlinks(const struct lat_probe *lp)
{
	return lp->nsites;
}

int lat_probe_progs(const struct lat_probe *lp, int *fds, const char **names, int max)
{
	return bpf_loader_progs(lp->skel->obj, fds, names, max);
}

int lat_probe_bk_hists_fd(const struct lat_probe *lp)
{
	return bpf_map__fd(lp->skel->maps.bk_hists);
}

int lat_probe_bk_titles_fd(const struct lat_probe *lp)
{
	return bpf_map__fd(lp->skel->maps.bk_titles);
}

int lat_probe_stmt_hists_fd(const struct lat_probe *lp)
{
	return bpf_map__fd(lp->skel->maps.stmt_hists);
}

int lat_probe_ncpus(const struct lat_probe *lp)
{
	return lp->ncpus;
}

int lat_probe_hist_drops(const struct lat_probe *lp, struct slothist_drops *out)
{
	return slothist_drops_read(bpf_map__fd(lp->skel->maps.slothist_drops), lp->ncpus, out);
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
		out->untracked += h->untracked;
		out->at_exit += h->at_exit;
		out->looks += h->looks;
		out->commits += h->commits;
		out->aborts += h->aborts;
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

/* The PgBackendStatus path: backends inside a statement at their last look. */
static int pending_backends(struct lat_probe *lp)
{
	int fd = bpf_map__fd(lp->skel->maps.backends), n = 0;
	__u32 next, cur, *prev = NULL;
	struct lat_be e;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &e) == 0 && e.t.in_stmt)
			n++;
		cur = next;
		prev = &cur;
	}
	return n;
}

int lat_probe_pending(struct lat_probe *lp)
{
	int fd = bpf_map__fd(lp->skel->maps.starts), n = 0;
	struct lat_key next, cur, *prev = NULL;
	__u64 t0;

	if (lp->bestatus)
		return pending_backends(lp);

	/* an entry whose END came holds 0 until its thread's next START */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &t0) == 0 && t0)
			n++;
		cur = next;
		prev = &cur;
	}
	return n;
}

int lat_probe_read_stmts(struct lat_probe *lp, struct lat_stmt_entry **out)
{
	int sfd = bpf_map__fd(lp->skel->maps.stmts), tfd = bpf_map__fd(lp->skel->maps.texts);
	/* per-CPU values come out rounded up to 8 bytes each */
	struct lat_stmt *pc = calloc(lp->ncpus, sizeof(*pc));
	struct lat_stmt_entry *v = NULL;
	__u64 key, cur, *prev = NULL;
	int n = 0, cap = 0;

	_Static_assert(sizeof(struct lat_stmt) % 8 == 0, "per-CPU values are 8-byte aligned");
	*out = NULL;
	if (!pc)
		return -1;
	while (bpf_map_get_next_key(sfd, prev, &key) == 0) {
		cur = key;
		prev = &cur;
		if (n == cap) {
			struct lat_stmt_entry *nv = realloc(v, (cap ? 2 * cap : 64) * sizeof(*v));
			if (!nv) {
				free(v);
				free(pc);
				return -1;
			}
			v = nv;
			cap = cap ? 2 * cap : 64;
		}
		if (bpf_map_lookup_elem(sfd, &key, pc))
			continue;
		struct lat_stmt_entry *e = &v[n];
		memset(e, 0, sizeof(*e));
		e->key = key;
		for (int c = 0; c < lp->ncpus; c++) {
			e->s.count += pc[c].count;
			e->s.sum_ns += pc[c].sum_ns;
			if (pc[c].max_ns > e->s.max_ns)
				e->s.max_ns = pc[c].max_ns;
		}
		if (bpf_map_lookup_elem(tfd, &key, e->text))
			e->text[0] = '\0';
		e->text[LAT_TEXT_LEN - 1] = '\0';
		if (e->s.count)
			n++;
	}
	free(pc);
	*out = v;
	return n;
}
