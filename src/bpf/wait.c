/* Loads wait.bpf.c at sched_switch and the server's USDT probes, reads its maps. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/attach.h"
#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/stathash.h"
#include "bpf/filter.h"
#include "bpf/mapdump.h"
#include "bpf/wait.h"
#include "pg/layout.h"
#include "pg/probes.h"
#include "target/mem.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "target/usdt.h"
#include "util/error.h"
#include "wait.skel.h"

#define WAIT_STACKS 16384

struct wait_probe {
	struct wait *skel;
	struct links links;
	int nsites, ncpus;
	const struct wait_probe_opts *o;
	struct probe_list lists[5];
	bool no_usdt;
	/* the program's task cache, mapped read-only: the switch-ins it noted */
	const struct wait_tcslot *tc;
	size_t tc_len;
	__u32 tc_n;
};

void wait_probe_destroy(struct wait_probe *wp)
{
	if (!wp)
		return;
	links_release(&wp->links);
	if (wp->tc)
		munmap((void *)wp->tc, wp->tc_len);
	wait__destroy(wp->skel);
	for (int i = 0; i < 5; i++)
		probe_list_free(&wp->lists[i]);
	free(wp);
}

uint64_t wait_probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The row from its start to past its last field wait reads, in one copy, when that is
 * at most WAIT_TEXT_LEN bytes and each field is aligned in it (the verifier's strict
 * alignment): 15's layout takes 256. Otherwise the program reads them one by one.
 */
static void be_span(struct wait_probe *wp, const struct bestatus_cfg *b)
{
	const uint32_t off[] = { b->changecount_off, b->procpid_off, b->activity_ts_off,
				 b->state_off, b->activity_off };
	const uint32_t size[] = { 4, 4, 8, 4, 8 };
	uint32_t hi = 0;

	for (int i = 0; i < 5; i++) {
		if (off[i] % size[i])
			return;
		if (off[i] + size[i] > hi)
			hi = off[i] + size[i];
	}
	hi = (hi + 7) & ~7u;
	if (hi <= WAIT_TEXT_LEN)
		wp->skel->rodata->be_span_len = hi;
}

struct wait_probe *wait_probe_open(const struct wait_probe_opts *o)
{
	struct wait_probe *wp = calloc(1, sizeof(*wp));

	if (!wp) {
		error("out of memory");
		return NULL;
	}
	wp->o = o;
	wp->ncpus = libbpf_num_possible_cpus();
	wp->skel = BPF_LOADER_OPEN(wait);
	if (!wp->skel)
		goto fail;
	TARGET_FILTER_RODATA(wp->skel, o->target);
	wp->skel->rodata->wait_ptr_addr = o->ptr_addr;
	wp->skel->rodata->wait_field_off = o->field_off;
	wp->skel->rodata->idle_event = o->idle_event;
	wp->skel->rodata->want_stacks = o->stacks;
	wp->skel->rodata->self_time = o->self_time;
	if (o->stacks)
		bpf_map__set_max_entries(wp->skel->maps.stacks, WAIT_STACKS);
	/* a bit per thread id; a pid_max raised later sends the new ids through the filter */
	bpf_map__set_max_entries(wp->skel->maps.pidbits, (proc_pid_max() + 63) / 64);
	bpf_program__set_autoload(wp->skel->progs.on_switch_empty, o->floor);
	/* read in place at each report: a copy through the syscall is 16384 entries */
	bpf_map__set_map_flags(wp->skel->maps.taskcache,
			       bpf_map__map_flags(wp->skel->maps.taskcache) | BPF_F_MMAPABLE);
	attach_progs_prepare(&(struct attach_progs){ .multi = wp->skel->progs.event_multi,
						     .single = wp->skel->progs.event_uprobe });
	if (o->bestatus.beentry_addr) {
		BESTATUS_RODATA(wp->skel, &o->bestatus);
		be_span(wp, &o->bestatus);
	}
	/* no probe programs where nothing is trapped: nor their verification at start */
	if (o->bestatus.beentry_addr || o->floor) {
		bpf_program__set_autoload(wp->skel->progs.query_start, false);
		bpf_program__set_autoload(wp->skel->progs.event_multi, false);
		bpf_program__set_autoload(wp->skel->progs.event_uprobe, false);
	}
	stathash_dfa_fill((__u16 *)wp->skel->rodata->stathash_dfa);
	if (bpf_loader_load(wp->skel->skeleton, "wait", o->target))
		goto fail;
	wp->tc_n = bpf_map__max_entries(wp->skel->maps.taskcache);
	wp->tc_len = wp->tc_n * sizeof(*wp->tc);
	void *tc = mmap(NULL, wp->tc_len, PROT_READ, MAP_SHARED,
			bpf_map__fd(wp->skel->maps.taskcache), 0);
	if (tc == MAP_FAILED) {
		error_errno("cannot map wait's task cache");
		goto fail;
	}
	wp->tc = tc;
	return wp;
fail:
	wait_probe_destroy(wp);
	return NULL;
}

int wait_probe_opts_bestatus(struct wait_probe_opts *o, int major, const char *binary,
			     pid_t ref, struct pg_bestatus *b)
{
	if (pg_bestatus_find(major, binary, ref, b) < 0 ||
	    bestatus_cfg_init(&o->bestatus, b, b->why, sizeof(b->why)) < 0) {
		memset(&o->bestatus, 0, sizeof(o->bestatus));
		return -1;
	}
	return 0;
}

/* The same test as wait.bpf.c's backend_busy(), through process_vm_readv. */
bool wait_probe_backend_busy(const struct wait_probe_opts *o, pid_t pid)
{
	uint64_t be = 0;
	uint32_t st = 0;

	const struct bestatus_cfg *b = &o->bestatus;

	if (!b->beentry_addr || mem_read_u64(pid, b->beentry_addr, &be) < 0 || !be ||
	    mem_read(pid, be + b->state_off, &st, sizeof(st)) < 0)
		return false;
	return st == b->st_idle_xact || st == b->st_idle_xact_aborted || st == b->st_running ||
	       st == b->st_fastpath;
}

void wait_probe_start(struct wait_probe *wp, uint64_t t0)
{
	wp->skel->bss->t0 = t0;
}

static int seed(struct wait_probe *wp, pid_t tid, pid_t tgid, bool oncpu, uint32_t event,
		bool in_xact, bool exec_known, uint64_t exec)
{
	uint64_t t0 = wp->skel->bss->t0;
	struct wait_thread t = { .since = t0, .first = t0, .tgid = tgid, .oncpu = oncpu,
				 .event = event, .exec = exec, .exec_known = exec_known };
	struct wait_proc p = { .first = t0 };
	__u32 k = tid, pk = tgid;

	if (!oncpu) {
		/* a transaction open at the start is seen from its next probe only */
		t.kind = event == 0 ? WAIT_KIND_UNLABELLED :
			 event == wp->o->idle_event && !in_xact ? WAIT_KIND_IDLE : WAIT_KIND_WAIT;
	}
	bpf_map_update_elem(bpf_map__fd(wp->skel->maps.procs), &pk, &p, BPF_NOEXIST);
	return bpf_map_update_elem(bpf_map__fd(wp->skel->maps.threads), &k, &t, BPF_NOEXIST) ?
	       -1 : 0;
}

int wait_probe_seed(struct wait_probe *wp, pid_t tid, pid_t tgid, bool oncpu, uint32_t event,
		    bool in_xact)
{
	return seed(wp, tid, tgid, oncpu, event, in_xact, false, 0);
}

int wait_probe_seed_exec(struct wait_probe *wp, pid_t tid, pid_t tgid, uint32_t event,
			 bool in_xact, uint64_t exec_ns)
{
	return seed(wp, tid, tgid, false, event, in_xact, true, exec_ns);
}

/* One USDT probe of the server by name into the plan; the cookie says which it is. */
static int plan_usdt(struct wait_probe *wp, struct attach_plan *pl, int slot,
		     const char *provider, const char *name, bool query_start, uint64_t cookie)
{
	struct attach_progs events = { .multi = wp->skel->progs.event_multi,
				       .single = wp->skel->progs.event_uprobe };
	struct attach_progs start = { .usdt = wp->skel->progs.query_start };

	if (probespec_resolve_usdt(wp->o->binary, provider, name, &wp->lists[slot]))
		return -1;
	for (int i = 0; i < wp->lists[slot].n; i++) {
		attach_plan_probe(pl, query_start ? &start : &events, &wp->lists[slot].p[i], cookie,
				  query_start);
		wp->nsites += probe_nsites(&wp->lists[slot].p[i]);
	}
	return 0;
}

int wait_probe_attach(struct wait_probe *wp)
{
	const struct pg_probes *n = pg_probes_for(wp->o->major);
	struct attach_plan plan;
	int rc;

	attach_plan_init(&plan, wp->o->target);
	wp->nsites = 1; /* the scheduler's tracepoint */
	attach_plan_prog(&plan, wp->o->floor ? wp->skel->progs.on_switch_empty :
					       wp->skel->progs.on_switch,
			 "to the sched_switch tracepoint");
	if (wp->o->floor) {
		rc = attach_plan_run(&plan, &wp->links);
		attach_plan_free(&plan);
		return rc;
	}
	if (wp->o->bestatus.beentry_addr) {
		/* the state and the statement are read at the switches: no probe to trap */
		rc = attach_plan_run(&plan, &wp->links);
		attach_plan_free(&plan);
		return rc;
	}
	if (!n) {
		attach_plan_free(&plan);
		error("PostgreSQL %d is older than any version dbtap knows the probes of",
		      wp->o->major);
		hint("wait needs PostgreSQL 12 or later");
		return -1;
	}
	struct usdt_list ul = { 0 };
	if (usdt_list_read(wp->o->binary, &ul)) {
		attach_plan_free(&plan);
		return -1;
	}
	bool have = usdt_list_find(&ul, n->provider, n->query_start) &&
		    usdt_list_find(&ul, n->provider, n->txn_start);
	usdt_list_free(&ul);
	if (!have) {
		/* the waits are measured all the same: only what the probes add is missing */
		warning("'%s' has no USDT probes %s:%s and %s: no statements, and every"
			" Client:ClientRead counts as idle", wp->o->binary, n->provider,
			n->query_start, n->txn_start);
		hint("a server built with --enable-dtrace (Debian's and PGDG's packages are) has them");
		wp->no_usdt = true;
		rc = attach_plan_run(&plan, &wp->links);
		attach_plan_free(&plan);
		return rc;
	}
	/* the ends before the starts: nothing is opened that could not be closed */
	rc = plan_usdt(wp, &plan, 0, n->provider, n->txn_commit, false, WAIT_EV_TXN_COMMIT) ||
	     plan_usdt(wp, &plan, 1, n->provider, n->txn_abort, false, WAIT_EV_TXN_ABORT) ||
	     plan_usdt(wp, &plan, 2, n->provider, n->query_done, false, WAIT_EV_QUERY_DONE) ||
	     plan_usdt(wp, &plan, 3, n->provider, n->txn_start, false, WAIT_EV_TXN_START) ||
	     plan_usdt(wp, &plan, 4, n->provider, n->query_start, true, 0) ? -1 :
	     attach_plan_run(&plan, &wp->links);
	attach_plan_free(&plan);
	return rc;
}

int wait_probe_nlinks(const struct wait_probe *wp)
{
	return wp->nsites;
}

/* One map read back into entries of { key; value; } (mapdump.c), for the three below. */
#define WAIT_READ(wp, map, out, ktype, vtype, vfield)                                \
	map_dump_entries(bpf_map__fd((wp)->skel->maps.map), sizeof(ktype), sizeof(vtype),    \
			 sizeof(**(out)), offsetof(__typeof__(**(out)), vfield), (void **)(out))

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct wait_entry *)a)->k, &((const struct wait_entry *)b)->k,
		      sizeof(struct wait_key));
}

int wait_entries_merge(struct wait_entry *e, int n)
{
	int m = 0;

	if (n > 1)
		qsort(e, n, sizeof(*e), cmp_key);
	for (int i = 0; i < n; i++) {
		if (m && !memcmp(&e[m - 1].k, &e[i].k, sizeof(e[i].k))) {
			e[m - 1].v.ns += e[i].v.ns;
			e[m - 1].v.count += e[i].v.count;
			if (e[i].v.max_ns > e[m - 1].v.max_ns)
				e[m - 1].v.max_ns = e[i].v.max_ns;
			continue;
		}
		e[m++] = e[i];
	}
	return m;
}

/*
 * The aggregates, then the threads' held stretches (wait.bpf.c held_cpu_add, held_off_add) added
 * on paper. In that order: the kernel empties a thread's slot before it adds the slot
 * to the map, so a stretch moved between the two reads is missed by this read, never
 * counted twice, and the sums never go down from one read to the next.
 */
int wait_probe_read(struct wait_probe *wp, struct wait_entry **out)
{
	struct wait_thread_entry *th = NULL;
	struct wait_entry *e;
	int n = WAIT_READ(wp, aggs, out, struct wait_key, struct wait_val, v), nth;

	if (n < 0)
		return -1;
	nth = wait_probe_read_threads(wp, &th);
	if (nth < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	e = realloc(*out, (n + (2 * WAIT_HELD_CPU + WAIT_HELD_OFF) * nth + 1) * sizeof(*e));
	if (!e) {
		free(th);
		free(*out);
		*out = NULL;
		return -1;
	}
	for (int i = 0; i < nth; i++) {
		const struct wait_thread *t = &th[i].t;

		for (int j = 0; j < WAIT_HELD_CPU; j++) {
			const struct wait_held_cpu *h = &t->held_cpu[j];
			struct wait_key k = { .stmt = h->stmt, .tgid = t->tgid,
					      .kind = WAIT_KIND_CPU };
			if (!(t->hc_on & (1u << j)))
				continue;
			e[n++] = (struct wait_entry){ .k = k,
						      .v = { .ns = h->cpu_ns, .max_ns = h->cpu_max } };
			if (h->run_ns) {
				k.kind = WAIT_KIND_RUNNABLE;
				e[n++] = (struct wait_entry){ .k = k,
							      .v = { .ns = h->run_ns,
								     .max_ns = h->run_max } };
			}
		}
		for (int j = 0; j < WAIT_HELD_OFF; j++)
			if (t->ho_on & (1u << j))
				e[n++] = (struct wait_entry){ .k = t->held_off[j].k,
							      .v = t->held_off[j].v };
	}
	free(th);
	*out = e;
	return wait_entries_merge(e, n);
}

/*
 * The switch-ins the program noted in its task cache (waitword.bpf.h) and has not yet
 * taken: a thread whose entry says off CPU since `since` and whose slot holds a later
 * switch-in is on CPU since then (t_in).
 */
static void threads_switched_in(struct wait_probe *wp, struct wait_thread_entry *th, int n)
{
	for (__u32 i = 0; i < wp->tc_n; i++) {
		__u64 t_in = *(volatile const __u64 *)&wp->tc[i].t_in, w;
		if (!t_in)
			continue;
		w = *(volatile const __u64 *)&wp->tc[i].word;
		if (!(w & TC_VALID) || !(w & TC_TRACED))
			continue;
		__u32 tid = (w >> TC_TID_SHIFT) & ((1u << 22) - 1);
		for (int j = 0; j < n; j++)
			if (th[j].tid == tid && !th[j].t.oncpu && t_in >= th[j].t.since)
				th[j].t_in = t_in;
	}
}

int wait_probe_read_threads(struct wait_probe *wp, struct wait_thread_entry **out)
{
	int n = WAIT_READ(wp, threads, out, __u32, struct wait_thread, t);

	if (n > 0)
		threads_switched_in(wp, *out, n);
	return n;
}

int wait_probe_read_procs(struct wait_probe *wp, struct wait_proc_entry **out)
{
	return WAIT_READ(wp, procs, out, __u32, struct wait_proc, p);
}

int wait_probe_text(struct wait_probe *wp, uint64_t stmt, char *buf)
{
	__u64 k = stmt;

	if (bpf_map_lookup_elem(bpf_map__fd(wp->skel->maps.texts), &k, buf)) {
		buf[0] = '\0';
		return -1;
	}
	buf[WAIT_TEXT_LEN - 1] = '\0';
	return 0;
}

int wait_probe_drops(struct wait_probe *wp, struct wait_drops *out)
{
	struct wait_drops *pc = calloc(wp->ncpus, sizeof(*pc));
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (!pc)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(wp->skel->maps.drops), &zero, pc)) {
		free(pc);
		return -1;
	}
	for (int c = 0; c < wp->ncpus; c++) {
		out->aggs_full += pc[c].aggs_full;
		out->threads_full += pc[c].threads_full;
		out->texts_full += pc[c].texts_full;
		out->stacks_lost += pc[c].stacks_lost;
		out->switches += pc[c].switches;
		out->unpaired += pc[c].unpaired;
		for (int k = 0; k < 2; k++) {
			out->self_ns[k] += pc[c].self_ns[k];
			out->self_runs[k] += pc[c].self_runs[k];
		}
	}
	free(pc);
	return 0;
}

int wait_probe_stack(struct wait_probe *wp, uint32_t id1, uint64_t *ips, int max)
{
	__u64 frames[127] = { 0 };
	__u32 id = id1 - 1;
	int n = 0;

	if (!id1 || bpf_map_lookup_elem(bpf_map__fd(wp->skel->maps.stacks), &id, frames))
		return 0;
	for (int i = 0; i < 127 && i < max && frames[i]; i++)
		ips[n++] = frames[i];
	return n;
}
