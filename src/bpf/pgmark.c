/* Loads pgmark.bpf.c onto the server's transaction, statement and checkpoint probes; hands on its records, reads its histograms. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/filter.h"
#include "bpf/pgmark.h"
#include "pg/probes.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "util/error.h"
#include "pgmark.skel.h"

struct pgmark_probe {
	struct pgmark *skel;
	struct links links;
	struct probe_list probes;
	int nsites;
	struct bpf_ring ring;
	int ncpus;
	void *percpu;
};

void pgmark_probe_destroy(struct pgmark_probe *p)
{
	if (!p)
		return;
	links_release(&p->links);
	probe_list_free(&p->probes);
	bpf_loader_ring_free(&p->ring);
	pgmark__destroy(p->skel);
	free(p->percpu);
	free(p);
}

/* A marker record, checked, and its statement text bounded, to the caller's callback. */
static bool deliver(const void *data, size_t len, bpf_ring_fn fn, void *arg)
{
	const struct pgmark_rec *r = data;
	char text[PGMARK_TEXT_LEN];

	if (len < sizeof(*r) || r->kind == 0 || r->kind >= PGMARK_KINDS)
		return false;
	bool span = r->kind == PGMARK_TXN_SPAN || r->kind == PGMARK_STMT_SPAN;
	if (span && (len < PGMARK_SPAN_REC_NOTEXT ||
		     ((const struct pgmark_span_rec *)data)->t0_ns > r->time_ns))
		return false;
	text[0] = '\0';
	/* what the server passed: bounded and terminated here, whatever the kernel copied */
	if (r->kind == PGMARK_QUERY_START && len >= sizeof(struct pgmark_text_rec)) {
		memcpy(text, ((const struct pgmark_text_rec *)data)->text, sizeof(text));
		text[sizeof(text) - 1] = '\0';
	} else if (r->kind == PGMARK_STMT_SPAN && len >= sizeof(struct pgmark_span_rec)) {
		memcpy(text, ((const struct pgmark_span_rec *)data)->text, sizeof(text));
		text[sizeof(text) - 1] = '\0';
	}
	if (fn)
		((void (*)(const struct pgmark_rec *, const char *, void *))fn)(r, text, arg);
	return true;
}

int pgmark_probe_open(struct pgmark_probe **out, const struct pgmark_probe_opts *o)
{
	const struct pg_probes *names = pg_probes_for(o->major);
	struct pgmark_probe *p;
	int rc = EXIT_FAIL;

	*out = NULL;
	if (!names) {
		error("PostgreSQL %d is older than any version dbtap knows the probes of", o->major);
		hint("dbtap knows PostgreSQL 9 and later");
		return EXIT_FAIL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return error("out of memory"), EXIT_FAIL;
	p->ncpus = libbpf_num_possible_cpus();
	p->percpu = calloc(p->ncpus, sizeof(struct pgmark_hist));
	if (!p->percpu) {
		error("out of memory");
		goto fail;
	}
	p->skel = BPF_LOADER_OPEN(pgmark);
	if (!p->skel)
		goto fail;
	TARGET_FILTER_RODATA(p->skel, o->target);
	p->skel->rodata->want_records = o->records;
	p->skel->rodata->switch_marks = o->switch_marks;
	if (o->switch_marks)
		bpf_map__set_max_entries(p->skel->maps.aborted, (proc_pid_max() + 63) / 64);
	if (!o->records)
		bpf_map__set_max_entries(p->skel->maps.ring, 4096);
	attach_progs_prepare(&(struct attach_progs){ .multi = p->skel->progs.mark_multi,
						     .single = p->skel->progs.mark_uprobe });
	/* the statements' start from the probe only where no switch-out reads them */
	bpf_program__set_autoload(p->skel->progs.query_start, o->statements && !o->switch_marks);
	if (bpf_loader_load(p->skel->skeleton, "pgmark", o->target))
		goto fail;
	if (bpf_loader_ring(&p->ring, p->skel->maps.ring, deliver, "pgmark"))
		goto fail;
	/* Ends before starts: a start alone would leave open spans with nothing to close them. */
	/* read at the switch-outs, the aborts still come from their probe (rows cannot say) */
	struct { const char *name; enum pgmark_kind kind; bool stmt, xact; } at[] = {
		{ names->txn_commit, PGMARK_TXN_COMMIT, false, true },
		{ names->txn_abort, PGMARK_TXN_ABORT, false, false },
		{ names->txn_start, PGMARK_TXN_START, false, true },
		{ names->query_done, PGMARK_QUERY_DONE, true, true },
		{ names->query_start, PGMARK_QUERY_START, true, true },
		{ names->ckpt_done, PGMARK_CKPT_DONE, false, false },
		{ names->ckpt_start, PGMARK_CKPT_START, false, false },
	};
	/* Every probe resolved first: the plan points into the list, which grows meanwhile. */
	enum pgmark_kind kinds[sizeof(at) / sizeof(at[0])];
	rc = 0;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]) && !rc; i++)
		if ((!at[i].stmt || o->statements) && !(at[i].xact && o->switch_marks)) {
			kinds[p->probes.n] = at[i].kind;
			rc = probespec_resolve_usdt(o->binary, names->provider, at[i].name, &p->probes);
		}
	if (rc)
		goto fail;
	struct attach_progs marks = { .multi = p->skel->progs.mark_multi,
				      .single = p->skel->progs.mark_uprobe };
	struct attach_progs start = { .usdt = p->skel->progs.query_start };
	struct attach_plan plan;
	attach_plan_init(&plan, o->target);
	for (int i = 0; i < p->probes.n; i++) {
		bool query = kinds[i] == PGMARK_QUERY_START;
		attach_plan_probe(&plan, query ? &start : &marks, &p->probes.p[i], kinds[i], query);
		p->nsites += probe_nsites(&p->probes.p[i]);
	}
	if ((o->attach_later ? attach_plan_start : attach_plan_run)(&plan, &p->links))
		rc = EXIT_FAIL;
	attach_plan_free(&plan);
	if (rc)
		goto fail;
	*out = p;
	return EXIT_OK;
fail:
	pgmark_probe_destroy(p);
	return rc ? rc : EXIT_FAIL;
}

int pgmark_probe_attached(struct pgmark_probe *p)
{
	return links_attach_wait(&p->links) ? EXIT_FAIL : EXIT_OK;
}

int pgmark_probe_consume(struct pgmark_probe *p,
			 void (*fn)(const struct pgmark_rec *r, const char *text, void *arg),
			 void *arg)
{
	return bpf_loader_consume(&p->ring, (bpf_ring_fn)fn, arg);
}

static int read_hist(struct pgmark_probe *p, __u32 which, struct hist *h)
{
	hist_reset(h);
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.hists), &which, p->percpu) < 0)
		return -1;
	for (int c = 0; c < p->ncpus; c++) {
		const struct pgmark_hist *ph = (const struct pgmark_hist *)p->percpu + c;
		h->count += ph->count;
		h->sum += ph->sum_ns;
		for (unsigned i = 0; i < LL_BUCKETS; i++)
			h->counts[i] += ph->ll[i];
	}
	return 0;
}

int pgmark_probe_read(struct pgmark_probe *p, struct pgmark_totals *t)
{
	__u64 v[256];

	memset(t->stats, 0, sizeof(t->stats));
	for (__u32 i = 0; i < PGMARK_ST_MAX; i++) {
		if (p->ncpus > 256 || bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stats), &i, v) < 0)
			return -1;
		for (int c = 0; c < p->ncpus; c++)
			t->stats[i] += v[c];
	}
	if (read_hist(p, 0, &t->txn) < 0 || read_hist(p, 1, &t->stmt) < 0)
		return -1;
	return 0;
}

int pgmark_probe_nlinks(const struct pgmark_probe *p)
{
	return p->nsites;
}

void pgmark_probe_fds(const struct pgmark_probe *p, struct pgmark_fds *f)
{
	f->ring = bpf_map__fd(p->skel->maps.ring);
	f->hists = bpf_map__fd(p->skel->maps.hists);
	f->stats = bpf_map__fd(p->skel->maps.stats);
	f->aborted = bpf_map__fd(p->skel->maps.aborted);
}
