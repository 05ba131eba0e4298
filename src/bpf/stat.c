/* Loads stat.bpf.c with per-CPU counters, attaches it at sched_switch (and the server's USDT probes), reads its maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/bestatus.h"
#include "bpf/filter.h"
#include "bpf/loglinear.h"
#include "bpf/mapdump.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/stathash.h"
#include "bpf/stat.h"
#include "perf/counter.h"
#include "pg/probes.h"
#include "target/proc.h"
#include "target/usdt.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "stat.skel.h"

struct stat_probe {
	struct stat *skel;
	struct links links;
	struct probe_list probes;
	int ncpus;
	int nev;
	int *err;       /* per event */
	int *fig;       /* per event: figure index, -1 when not measured */
	int *fds;       /* [slot * ncpus + cpu], -1 when not open */
	int nctr;
	__u32 clock_slots; /* counter slots the program times itself (clock events) */
	bool be; /* statements from PgBackendStatus at switches, no probe */
};

void stat_probe_destroy(struct stat_probe *p)
{
	if (!p)
		return;
	links_release(&p->links);
	stat__destroy(p->skel);
	probe_list_free(&p->probes);
	for (int i = 0; p->fds && i < p->nctr * p->ncpus; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	free(p->fds);
	free(p->err);
	free(p->fig);
	free(p);
}

const int *stat_probe_errors(const struct stat_probe *p)
{
	return p->err;
}

const char *stat_probe_source(const struct stat_probe *p)
{
	return p && p->be ? "pg_backend_status" : "usdt";
}

int stat_probe_counted(const struct stat_probe *p)
{
	int n = 0;
	for (int e = 0; e < p->nev; e++)
		n += p->fig[e] >= 0;
	return n;
}

int stat_probe_fig(const struct stat_probe *p, int ev)
{
	return p->fig[ev];
}

/* Refuses a binary without the probes, before anything is loaded. */
static int check_probes(const char *binary, const char *provider, const char *const *names,
			int n)
{
	struct usdt_list l = { 0 };

	if (usdt_list_read(binary, &l))
		return EXIT_FAIL;
	for (int i = 0; i < n; i++) {
		if (!usdt_list_find(&l, provider, names[i])) {
			error("'%s' has no USDT probe %s:%s", binary, provider, names[i]);
			if (!l.n)
				hint("the binary has no USDT probes at all: --by query and --by "
				     "transaction need a PostgreSQL built with --enable-dtrace "
				     "(Debian's and PGDG's packages are); plain counting works without");
			else
				hint("'dbtap count -l usdt:%s:%s:*' lists the probes it has", binary,
				     provider);
			usdt_list_free(&l);
			return EXIT_FAIL;
		}
	}
	usdt_list_free(&l);
	return 0;
}

/*
 * One counter per CPU for event ev into slot; 0, or the errno of the first CPU. check:
 * only whether it opens (on one CPU, closed again): a clock the program reads itself,
 * whose refusal still says what the user lacks.
 */
static int open_percpu(struct stat_probe *p, const struct perf_event_desc *ev, int slot,
		       bool check)
{
	int opened = 0, first_err = 0;

	for (int c = 0; c < p->ncpus; c++) {
		struct perf_event_attr attr = ev->attr;
		attr.size = sizeof(attr);
		attr.inherit = 0;
		attr.disabled = 0;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		int fd = perf_event_open_attr(&attr, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			/* a possible but offline CPU has nothing to count */
			if (errno != ENODEV && !first_err)
				first_err = errno;
			continue;
		}
		if (check) {
			close(fd);
			return 0;
		}
		p->fds[slot * p->ncpus + c] = fd;
		opened++;
	}
	if (opened)
		return 0;
	for (int c = 0; c < p->ncpus; c++)
		p->fds[slot * p->ncpus + c] = -1;
	return first_err ? first_err : ENODEV;
}

int stat_probe_open(struct stat_probe **out, const struct target *t,
		    const struct stat_probe_opts *o, const struct perf_event_desc *evs, int nev)
{
	bool per_query = o->per_query, be = per_query && o->be.beentry_addr;
	const struct pg_probes *names = pg_probes_for(t->kind == TARGET_PG ? t->pg.major : 0);
	struct stat_probe *p;
	int err;

	*out = NULL;
	if (!names) {
		error("this PostgreSQL is older than any version dbtap knows the probes of");
		hint("--by query|transaction needs PostgreSQL 9 or later; plain counting works on any process");
		return EXIT_FAIL;
	}
	if (!t->binary) {
		error("cannot find the program of %s", target_describe(t));
		hint("run as root so /proc/PID/exe can be read");
		return EXIT_FAIL;
	}
	const char *need_q[] = { names->query_start, names->query_done };
	const char *need_t[] = { names->txn_start, names->txn_commit, names->txn_abort };
	if (!be && check_probes(t->binary, names->provider, per_query ? need_q : need_t,
				per_query ? 2 : 3))
		return EXIT_FAIL;

	p = calloc(1, sizeof(*p));
	if (!p)
		return error("out of memory"), EXIT_FAIL;
	p->ncpus = libbpf_num_possible_cpus();
	p->nev = nev;
	p->be = be;
	p->err = calloc(nev, sizeof(int));
	p->fig = calloc(nev, sizeof(int));
	p->fds = malloc(STAT_MAX_EVENTS * p->ncpus * sizeof(int));
	if (p->ncpus <= 0 || !p->err || !p->fig || !p->fds) {
		stat_probe_destroy(p);
		return error("out of memory"), EXIT_FAIL;
	}
	for (int i = 0; i < STAT_MAX_EVENTS * p->ncpus; i++)
		p->fds[i] = -1;
	for (int e = 0; e < nev; e++) {
		const struct perf_event_attr *a = &evs[e].attr;
		p->fig[e] = -1;
		/* counted by the program at sched_switch, exactly what these events count */
		if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CONTEXT_SWITCHES) {
			p->fig[e] = STAT_FIG_CS;
			continue;
		}
		if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CPU_MIGRATIONS) {
			p->fig[e] = STAT_FIG_MIGR;
			continue;
		}
		p->nctr++;
		/* the time a segment spans: the program reads the clock itself */
		bool clock = a->type == PERF_TYPE_SOFTWARE &&
			     (a->config == PERF_COUNT_SW_TASK_CLOCK ||
			      a->config == PERF_COUNT_SW_CPU_CLOCK) &&
			     !a->exclude_user && !a->exclude_kernel;
		err = open_percpu(p, &evs[e], p->nctr - 1, clock);
		if (err) {
			p->nctr--;
			p->err[e] = err;
			continue;
		}
		p->fig[e] = p->nctr - 1;
		if (clock)
			p->clock_slots |= 1u << (p->nctr - 1);
	}
	for (int e = 0; e < nev; e++) {
		if (p->err[e] == EACCES || p->err[e] == EPERM) {
			/* per-CPU counters and BPF programs need privileges, whatever the event */
			error("--by %s needs privileges: per-CPU counters and BPF programs",
			      per_query ? "query" : "transaction");
			hint("run as root (or with CAP_PERFMON and CAP_BPF); plain counting of "
			     "your own processes works without: drop --by");
			stat_probe_destroy(p);
			return EXIT_FAIL;
		}
	}
	if (!stat_probe_counted(p)) {
		*out = p; /* the caller reports every event's reason */
		return 0;
	}

	p->skel = BPF_LOADER_OPEN(stat);
	if (!p->skel)
		goto fail;
	TARGET_FILTER_RODATA(p->skel, t);
	p->skel->rodata->nctr = p->nctr;
	p->skel->rodata->ncpus = p->ncpus;
	p->skel->rodata->clock_slots = p->clock_slots;
	p->skel->rodata->self_time = o->self_time;
	bpf_map__set_max_entries(p->skel->maps.counters,
				 (p->nctr ? p->nctr : 1) * p->ncpus);
	struct attach_progs progs = { .multi = p->skel->progs.stat_multi,
				      .single = p->skel->progs.stat_uprobe };
	struct attach_progs start_q = { .usdt = p->skel->progs.query_start };
	if (be) {
		/* no probe program: nor its verification at start */
		bpf_program__set_autoload(p->skel->progs.query_start, false);
		bpf_program__set_autoload(p->skel->progs.stat_multi, false);
		bpf_program__set_autoload(p->skel->progs.stat_uprobe, false);
		bpf_program__set_autoload(p->skel->progs.on_switch, false);
		BESTATUS_RODATA(p->skel, &o->be);
		/* a bit per thread id; a pid_max raised later sends the new ids through the filter */
		bpf_map__set_max_entries(p->skel->maps.pidbits, (proc_pid_max() + 63) / 64);
		/*
		 * Each thread's entry goes at its last switch: a plain hash, whose full map
		 * is counted, where an LRU would evict a running statement unseen.
		 */
		bpf_map__set_type(p->skel->maps.runs, BPF_MAP_TYPE_HASH);
		/*
		 * Buckets are added inside the scheduler, with interrupts off, where the
		 * allocator of a map without preallocation cannot refill: it holds 4
		 * elements at first, and the fifth bucket of a statement's first call was
		 * lost. Preallocated, and smaller for it (4.7 MB of kernel memory).
		 */
		bpf_map__set_map_flags(p->skel->maps.hists, 0);
		bpf_map__set_max_entries(p->skel->maps.hists, STAT_HISTS_PREALLOC);
	} else {
		attach_progs_prepare(&progs);
		bpf_program__set_autoload(p->skel->progs.query_start, per_query);
		bpf_program__set_autoload(p->skel->progs.on_switch_be, false);
		bpf_program__set_autoload(p->skel->progs.on_recv, false);
		bpf_program__set_autoload(p->skel->progs.be_look, false);
	}
	stathash_dfa_fill((__u16 *)p->skel->rodata->stathash_dfa);
	if (bpf_loader_load(p->skel->skeleton, "stat", t))
		goto fail;
	/* the look both sched_switch and sock_recv_length programs tail-call */
	if (be && bpf_loader_tail_call(p->skel->maps.looks, p->skel->progs.be_look, "stat"))
		goto fail;
	for (__u32 i = 0; i < (__u32)(p->nctr * p->ncpus); i++) {
		if (p->fds[i] < 0)
			continue;
		if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.counters), &i, &p->fds[i], 0)) {
			error_errno("cannot hand counter %u to the BPF program", i);
			hint("run as root");
			goto fail;
		}
	}
	/*
	 * pid -1: every process of the binary, later forks included; the filter narrows.
	 * The end probes first: a statement is never started without its end attached.
	 */
	const char *const *want = per_query ? need_q : need_t;
	static const int cookie_q[] = { -1, STAT_PROBE_QUERY_DONE };
	static const int cookie_t[] = { STAT_PROBE_TXN_START, STAT_PROBE_TXN_COMMIT,
					STAT_PROBE_TXN_ABORT };
	int nwant = be ? 0 : per_query ? 2 : 3;
	for (int i = 0; i < nwant; i++)
		if (probespec_resolve_usdt(t->binary, names->provider, want[i], &p->probes))
			goto fail;
	struct attach_plan plan;
	attach_plan_init(&plan, t);
	plan.pid = -1;
	if (be) {
		/* statements that start from now on are counted (PostgreSQL's own clock) */
		p->skel->bss->bestatus_since_us = bestatus_pg_now_us();
		attach_plan_prog(&plan, p->skel->progs.on_switch_be, "to the sched_switch tracepoint");
		attach_plan_prog(&plan, p->skel->progs.on_recv, "to the sock_recv_length tracepoint");
	} else {
		attach_plan_prog(&plan, p->skel->progs.on_switch, "to the sched_switch tracepoint");
	}
	for (int i = nwant - 1; i >= 0; i--) {
		int cookie = per_query ? cookie_q[i] : cookie_t[i];
		if (cookie < 0)
			attach_plan_probe(&plan, &start_q, &p->probes.p[i], 0, true);
		else
			attach_plan_probe(&plan, &progs, &p->probes.p[i], cookie, false);
	}
	err = attach_plan_run(&plan, &p->links);
	attach_plan_free(&plan);
	if (err)
		goto fail;
	*out = p;
	return 0;
fail:
	stat_probe_destroy(p);
	return EXIT_FAIL;
}

int stat_probe_self_time(struct stat_probe *p, struct stat_self out[STAT_ST_N])
{
	struct stat_self *pc;
	int ret = 0;

	memset(out, 0, STAT_ST_N * sizeof(*out));
	if (!p->skel)
		return 0;
	pc = calloc(p->ncpus, sizeof(*pc));
	if (!pc)
		return -1;
	for (__u32 k = 0; k < STAT_ST_N && !ret; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.selftime), &k, pc)) {
			ret = -1;
			break;
		}
		for (int c = 0; c < p->ncpus; c++) {
			out[k].runs += pc[c].runs;
			out[k].ns += pc[c].ns;
		}
	}
	free(pc);
	return ret;
}

void stat_snapshot_free(struct stat_snapshot *snap)
{
	for (int i = 0; i < snap->n; i++)
		for (int f = 0; f < STAT_FIGS; f++)
			sparse_hist_free(&snap->v[i].h[f]);
	free(snap->v);
	memset(snap, 0, sizeof(*snap));
}

/*
 * The kernel stores no zero in a histogram (hist_add()): bucket 0 holds what the
 * aggregate counted for figure f and the buckets do not: its calls, but those where
 * the counter was multiplexed out throughout; none in a slot past the nctr counters.
 * 0, or -1: no memory.
 */
static int hist_zeros(struct stat_stmt *st, int f, int nctr)
{
	uint64_t calls = st->agg.calls, in = sparse_hist_count(&st->h[f]);

	if (f < STAT_MAX_EVENTS)
		calls = f < nctr ? calls - st->agg.unscaled[f] : 0;
	if (calls <= in)
		return 0;
	return sparse_hist_add(&st->h[f], 0, calls - in);
}

int stat_probe_read(struct stat_probe *p, struct stat_snapshot *snap)
{
	int tfd, na, nh, ret = 0;
	__u64 *akeys = NULL, *hcounts = NULL;
	struct stat_agg *aggs = NULL;
	struct stat_hkey *hkeys = NULL;
	struct hashmap index = HASHMAP_INIT; /* statement key -> its place in snap->v */

	memset(snap, 0, sizeof(*snap));
	if (!p->skel)
		return 0;
	tfd = bpf_map__fd(p->skel->maps.texts);
	/* batched reads: the bucket map alone holds up to 262,144 entries */
	na = map_dump(bpf_map__fd(p->skel->maps.aggs), sizeof(*akeys), sizeof(*aggs),
		      (void **)&akeys, (void **)&aggs);
	if (na < 0)
		return -1;
	snap->v = calloc(na ? na : 1, sizeof(*snap->v));
	if (!snap->v) {
		free(akeys);
		free(aggs);
		return -1;
	}
	for (int i = 0; i < na; i++) {
		struct stat_stmt *s = &snap->v[snap->n];
		s->key = akeys[i];
		s->agg = aggs[i];
		if (bpf_map_lookup_elem(tfd, &akeys[i], s->text))
			s->text[0] = '\0';
		s->text[STAT_TEXT_MAX - 1] = '\0';
		if (hashmap_put_u64(&index, akeys[i], snap->n)) {
			ret = -1;
			break;
		}
		snap->n++;
	}
	free(akeys);
	free(aggs);
	nh = ret ? -1 : map_dump(bpf_map__fd(p->skel->maps.hists), sizeof(*hkeys),
				 sizeof(*hcounts), (void **)&hkeys, (void **)&hcounts);
	if (nh < 0)
		ret = -1;
	for (int j = 0; j < nh && !ret; j++) {
		const struct stat_hkey *hk = &hkeys[j];
		uint64_t i;
		if (!hashmap_get_u64(&index, hk->key, &i) || hk->fig >= STAT_FIGS ||
		    hk->bucket >= LL_BUCKETS)
			continue;
		if (sparse_hist_add(&snap->v[i].h[hk->fig], hk->bucket, hcounts[j]))
			ret = -1;
	}
	free(hkeys);
	free(hcounts);
	hashmap_free(&index);
	for (int i = 0; i < snap->n && !ret; i++)
		for (int f = 0; f < STAT_FIGS; f++)
			if (hist_zeros(&snap->v[i], f, p->nctr))
				ret = -1;
	for (int i = 0; i < snap->n; i++)
		for (int f = 0; f < STAT_FIGS; f++)
			sparse_hist_finish(&snap->v[i].h[f]);

	struct stat_drops *pc = calloc(p->ncpus, sizeof(*pc));
	__u32 zero = 0;
	if (pc && !bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.drops), &zero, pc)) {
		for (int c = 0; c < p->ncpus; c++) {
			snap->drops.agg_full += pc[c].agg_full;
			snap->drops.hist_full += pc[c].hist_full;
			snap->drops.read_err += pc[c].read_err;
			snap->drops.runs_full += pc[c].runs_full;
			snap->drops.unseparated += pc[c].unseparated;
			snap->drops.unreadable += pc[c].unreadable;
			snap->drops.unpaired += pc[c].unpaired;
		}
	}
	free(pc);
	return ret;
}
