/*
 * The sampling engine: BPF probe + process tracking + symbolization. The kernel
 * counts samples per (process, thread, user stack, kernel stack); this side learns
 * each process when the program first sees it (a ring buffer note), reads its
 * mappings and label at once, and at report time turns keys into named frames.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/progsyms.h"
#include "pg/cluster.h"
#include "profile/engine.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/hashtab.h"

struct prof_engine {
	struct target *t;
	struct profile_probe *probe;
	struct symbolizer *sym;
	struct strpool strs;
	struct u64map labels;    /* pid -> label id (backend type or command name) */
	struct u64map stacks;    /* hash -> index into stk (user) */
	struct u64map kstacks;   /* the same for kernel stacks */
	struct profile_stack *stk;
	size_t nstk, capstk;
	int nprocs;
	void (*fn)(const struct profile_rec *, void *);
	void *arg;
	char group[PROFILE_COMM_LEN + 96];
	uint32_t *frames;        /* scratch for one stack's frame ids */
	int kframes;             /* of those, how many at the end came from the kernel stack */
	pthread_t kthread;       /* reading /proc/kallsyms while the probe already samples */
	bool kthread_on;
	bool kernel;             /* kernel stacks are taken */
	char *learn_msgs;        /* what reading the running processes said, on its thread */
};

static void *kernel_syms_load(void *sym)
{
	symbolizer_load_kernel(sym);
	return NULL;
}

/*
 * Kernel symbols are needed only to name frames in a report: read in a thread of their
 * own once the probes are attached (prof_engine_preload_kernel), waited for before the
 * symbolizer is used, or else read by the first kernel frame named. That thread touches
 * only the kernel table. The kernel formats the 120,000 lines as they are read: 50 ms
 * of CPU, a few hundred ms of a loaded machine, and the table is 6 MB.
 */
static void kernel_syms_wait(struct prof_engine *e)
{
	if (e->kthread_on) {
		pthread_join(e->kthread, NULL);
		e->kthread_on = false;
	}
}

#define MAX_FRAMES (2 * PROFILE_MAX_DEPTH + 3)

/* The label of a live process: its backend type for a cluster, else its command name. */
static bool live_label(struct prof_engine *e, pid_t pid, char *buf, size_t len)
{
	if (e->t->kind == TARGET_PG) {
		if (pid == e->t->pg.postmaster) {
			snprintf(buf, len, "postmaster");
			return true;
		}
		char *title = proc_title(pid);
		struct pg_title pt;
		bool ok = title && pg_title_parse_full(title, &pt) == 0 && pt.type[0];
		if (ok)
			snprintf(buf, len, "%s", pt.type);
		free(title);
		if (ok)
			return true;
		/* not titled yet (just forked), or not a backend: the command name for now */
	}
	return proc_comm(pid, buf, len) == 0 && buf[0];
}

static void learn(struct prof_engine *e, pid_t pid)
{
	char label[96];
	uint64_t *v = u64map_get(&e->labels, pid);

	if (symbolizer_add_pid(e->sym, pid) == 0 && !v)
		e->nprocs++;
	if (live_label(e, pid, label, sizeof(label))) {
		/* a backend type, once known, is not replaced by the bare command name */
		if (v && e->t->kind == TARGET_PG && !strcmp(label, "postgres"))
			return;
		uint32_t id = strpool_intern(&e->strs, label);
		if (id != UINT32_MAX)
			u64map_put(&e->labels, pid, id);
	}
}

/* The target's processes as they are now: mappings and labels. */
static void learn_running(struct prof_engine *e)
{
	struct target *t = e->t;

	if (t->kind == TARGET_PG) {
		learn(e, t->pg.postmaster);
		symbolizer_set_fallback(e->sym, t->pg.postmaster);
		pg_cluster_refresh_procs(&t->pg);
		for (int i = 0; i < t->pg.nprocs; i++)
			learn(e, t->pg.procs[i].pid);
	} else if (t->kind == TARGET_PIDS || t->kind == TARGET_TID) {
		for (int i = 0; i < t->npids; i++)
			learn(e, t->pids[i]);
	}
}

static void *learn_thread(void *arg)
{
	struct prof_engine *e = arg;

	error_capture_begin();
	learn_running(e);
	e->learn_msgs = error_capture_end();
	return NULL;
}

int prof_engine_open(struct prof_engine **out, struct target *t, const struct profile_opts *o)
{
	struct prof_engine *e = calloc(1, sizeof(*e));
	int ret;

	*out = NULL;
	if (!e)
		return error("out of memory"), EXIT_FAIL;
	e->t = t;
	strpool_init(&e->strs);
	u64map_init(&e->labels);
	u64map_init(&e->stacks);
	u64map_init(&e->kstacks);
	e->sym = symbolizer_new();
	e->frames = malloc(MAX_FRAMES * sizeof(*e->frames));
	if (!e->sym || !e->frames) {
		prof_engine_free(e);
		return error("out of memory"), EXIT_FAIL;
	}
	symbolizer_set_bpf_loader(e->sym, bpf_progsyms_read);
	/*
	 * What runs now is read now, while the probe loads (a thread of its own: the two
	 * share nothing, and reading every process's mappings is as long as the kernel's
	 * verifying); what appears later is read at its first sample.
	 */
	pthread_t th;
	bool beside = pthread_create(&th, NULL, learn_thread, e) == 0;
	if (!beside)
		learn_running(e);
	ret = profile_probe_open(&e->probe, o);
	if (beside) {
		pthread_join(th, NULL);
		if (e->learn_msgs)
			fputs(e->learn_msgs, stderr);
		free(e->learn_msgs);
		e->learn_msgs = NULL;
	}
	if (ret) {
		prof_engine_free(e);
		return ret;
	}
	e->kernel = o->kernel;
	*out = e;
	return EXIT_OK;
}

void prof_engine_preload_kernel(struct prof_engine *e)
{
	/* without the thread, the first kernel frame loads them (symbolizer_kernel) */
	if (e->kernel && !e->kthread_on)
		e->kthread_on = pthread_create(&e->kthread, NULL, kernel_syms_load, e->sym) == 0;
}

void prof_engine_demangle(struct prof_engine *e, bool on)
{
	symbolizer_set_demangle(e->sym, on);
}

void prof_engine_free(struct prof_engine *e)
{
	if (!e)
		return;
	kernel_syms_wait(e);
	profile_probe_destroy(e->probe);
	symbolizer_free(e->sym);
	strpool_free(&e->strs);
	u64map_free(&e->labels);
	u64map_free(&e->stacks);
	u64map_free(&e->kstacks);
	free(e->stk);
	free(e->frames);
	free(e);
}

static void on_rec(const struct profile_rec *r, void *arg)
{
	struct prof_engine *e = arg;

	if (r->kind == PROFILE_REC_PROC)
		learn(e, r->pid);
	else if (r->kind == PROFILE_REC_SAMPLE && e->fn)
		e->fn(r, e->arg);
}

int prof_engine_poll(struct prof_engine *e, void (*fn)(const struct profile_rec *r, void *arg),
		     void *arg)
{
	e->fn = fn;
	e->arg = arg;
	return profile_probe_consume(e->probe, on_rec, e);
}

int prof_engine_read(struct prof_engine *e, struct profile_counts *c)
{
	/* the notes of the last moments first: their processes may still be there */
	prof_engine_poll(e, e->fn, e->arg);
	return profile_probe_read(e->probe, c);
}

int prof_engine_read_stats(struct prof_engine *e, __u64 stats[PROFILE_ST_MAX])
{
	return profile_probe_stats(e->probe, stats);
}

void prof_engine_stats(const struct profile_counts *c, struct prof_stats *st)
{
	st->lost_counts = c->stats[PROFILE_ST_COUNTS_FULL];
	st->lost_stacks = c->stats[PROFILE_ST_STACKS_FULL];
	st->lost = st->lost_counts + st->lost_stacks;
	st->ustack_err = c->stats[PROFILE_ST_USTACK_ERR];
	st->kstack_err = c->stats[PROFILE_ST_KSTACK_ERR];
	st->ring_full = c->stats[PROFILE_ST_RING_FULL];
	st->threads_full = c->stats[PROFILE_ST_THREADS_FULL];
	st->entry_fixed = c->stats[PROFILE_ST_ENTRY_FIXED];
}

const char *prof_engine_label(struct prof_engine *e, uint32_t pid)
{
	uint64_t *v = u64map_get(&e->labels, pid);
	struct profile_thread th;

	if (v)
		return strpool_str(&e->strs, (uint32_t)*v);
	if (pid == 0)
		return "swapper";
	/* never seen alive by this side: the name the kernel kept for its main thread */
	if (profile_probe_thread(e->probe, pid, &th) == 0 && th.comm[0]) {
		uint32_t id = strpool_intern(&e->strs, th.comm);
		if (id != UINT32_MAX) {
			u64map_put(&e->labels, pid, id);
			return strpool_str(&e->strs, id);
		}
	}
	return "exited";
}

uint32_t prof_engine_thread_pid(struct prof_engine *e, uint32_t tid)
{
	struct profile_thread th;

	return profile_probe_thread(e->probe, tid, &th) == 0 ? th.pid : tid;
}

const char *prof_engine_group(struct prof_engine *e, uint32_t pid, uint32_t tid, enum prof_by by)
{
	struct profile_thread th;

	switch (by) {
	case PROF_BY_THREAD:
		if (profile_probe_thread(e->probe, tid, &th) < 0 || !th.comm[0])
			snprintf(th.comm, sizeof(th.comm), "?");
		snprintf(e->group, sizeof(e->group), "%s %u", th.comm, tid);
		break;
	case PROF_BY_PID:
		snprintf(e->group, sizeof(e->group), "%s %u", prof_engine_label(e, pid), pid);
		break;
	case PROF_BY_TYPE:
		snprintf(e->group, sizeof(e->group), "%s", prof_engine_label(e, pid));
		break;
	case PROF_BY_NONE:
		/* the process's command name, as stackcollapse tools root their stacks */
		if (profile_probe_thread(e->probe, pid, &th) == 0 && th.comm[0])
			snprintf(e->group, sizeof(e->group), "%s", th.comm);
		else if (pid == 0)
			snprintf(e->group, sizeof(e->group), "swapper");
		else
			snprintf(e->group, sizeof(e->group), "%s", prof_engine_label(e, pid));
		break;
	}
	return e->group;
}

/* The index in stk of the stack under hash, fetched from the kernel once; -1 if gone. */
static long get_stack(struct prof_engine *e, bool kernel, uint64_t hash)
{
	struct u64map *m = kernel ? &e->kstacks : &e->stacks;
	uint64_t *v = u64map_get(m, hash);

	if (v)
		return *v == UINT64_MAX ? -1 : (long)*v;
	if (e->nstk == e->capstk) {
		size_t cap = e->capstk ? e->capstk * 2 : 256;
		struct profile_stack *ns = realloc(e->stk, cap * sizeof(*ns));
		if (!ns)
			return -1;
		e->stk = ns;
		e->capstk = cap;
	}
	if (profile_probe_stack(e->probe, kernel, hash, &e->stk[e->nstk]) < 0) {
		u64map_put(m, hash, UINT64_MAX);
		return -1;
	}
	u64map_put(m, hash, e->nstk);
	return (long)e->nstk++;
}

int prof_engine_rotate(struct prof_engine *e, const uint64_t *ustacks, size_t nu,
		       const uint64_t *kstacks, size_t nk)
{
	struct u64map um, km;
	struct profile_stack *stk;
	size_t n = 0;
	int deleted;

	/* copies of what is kept, fetched before the kernel forgets it */
	for (size_t i = 0; i < nu; i++)
		if (ustacks[i] > 1)
			get_stack(e, false, ustacks[i]);
	for (size_t i = 0; i < nk; i++)
		if (kstacks[i] > 1)
			get_stack(e, true, kstacks[i]);
	stk = malloc((nu + nk + 1) * sizeof(*stk));
	if (!stk)
		return -1;
	u64map_init(&um);
	u64map_init(&km);
	for (int kernel = 0; kernel < 2; kernel++) {
		const uint64_t *h = kernel ? kstacks : ustacks;
		struct u64map *old = kernel ? &e->kstacks : &e->stacks, *nm = kernel ? &km : &um;
		for (size_t i = 0; i < (kernel ? nk : nu); i++) {
			uint64_t *v = u64map_get(old, h[i]);
			if (!v || *v == UINT64_MAX || u64map_get(nm, h[i]))
				continue;
			stk[n] = e->stk[*v];
			u64map_put(nm, h[i], n++);
		}
	}
	deleted = profile_probe_clear_stacks(e->probe);
	free(e->stk);
	u64map_free(&e->stacks);
	u64map_free(&e->kstacks);
	e->stk = stk;
	e->nstk = n;
	e->capstk = nu + nk + 1;
	e->stacks = um;
	e->kstacks = km;
	return deleted;
}

static enum stack_kind stack_kind_of(enum sym_kind k)
{
	switch (k) {
	case SYM_USER: return STACK_USER;
	case SYM_KERNEL: return STACK_KERNEL;
	case SYM_JIT: return STACK_JIT;
	case SYM_UNNAMED: return STACK_UNNAMED;
	}
	return STACK_UNNAMED;
}

int prof_engine_frames(struct prof_engine *e, const struct profile_key *k, enum prof_by by,
		       struct stack_set *ss, const uint32_t **frames, unsigned *flags)
{
	uint32_t *f = e->frames;
	int n = 0;
	bool truncated = false, missing = false;
	const struct profile_stack *us = NULL, *ks = NULL;
	struct sym_frame sf;

	long ui = k->ustack > 1 ? get_stack(e, false, k->ustack) : -1;
	long ki = k->kstack > 1 ? get_stack(e, true, k->kstack) : -1;

	/* indices first: the second fetch may move the array */
	missing = (k->ustack > 1 && ui < 0) || (k->kstack > 1 && ki < 0);
	us = ui >= 0 ? &e->stk[ui] : NULL;
	ks = ki >= 0 ? &e->stk[ki] : NULL;
	f[n++] = stack_set_frame(ss, prof_engine_group(e, k->pid, k->tid, by), STACK_GROUP);
	if (us && (us->flags & PROFILE_STACK_TRUNCATED))
		truncated = true;
	if (truncated)
		f[n++] = stack_set_frame(ss, "[truncated]", STACK_MARK);
	if (missing)
		f[n++] = stack_set_frame(ss, "[stack lost]", STACK_MARK);
	for (int i = us ? (int)us->len - 1 : -1; i >= 0; i--) {
		symbolizer_user(e->sym, k->pid, us->ip[i], i > 0, &sf);
		f[n++] = stack_set_frame(ss, sf.name, stack_kind_of(sf.kind));
	}
	e->kframes = n;
	if (ks && (ks->flags & PROFILE_STACK_TRUNCATED)) {
		truncated = true;
		f[n++] = stack_set_frame(ss, "[truncated]", STACK_MARK);
	}
	if (ks)
		kernel_syms_wait(e);
	for (int i = ks ? (int)ks->len - 1 : -1; i >= 0; i--) {
		symbolizer_kernel(e->sym, ks->ip[i], i > 0, &sf);
		f[n++] = stack_set_frame(ss, sf.name, stack_kind_of(sf.kind));
	}
	e->kframes = n - e->kframes;
	for (int i = 0; i < n; i++)
		if (f[i] == UINT32_MAX)
			return -1;
	*frames = f;
	*flags = (truncated ? PROF_TRUNCATED : 0) | (missing ? PROF_MISSING : 0);
	return n;
}

int prof_engine_kernel_frames(const struct prof_engine *e)
{
	return e->kframes;
}

int prof_engine_add(struct prof_engine *e, const struct profile_key *k, uint64_t count,
		    enum prof_by by, struct stack_set *ss, struct prof_stats *st)
{
	const uint32_t *f;
	unsigned flags;
	int n = prof_engine_frames(e, k, by, ss, &f, &flags);

	if (n < 0)
		return -1;
	if (st) {
		st->samples += count;
		if (flags & PROF_TRUNCATED)
			st->truncated += count;
		if (flags & PROF_MISSING)
			st->stack_missing += count;
	}
	return stack_set_add(ss, f, n, count);
}

int prof_engine_modules(struct prof_engine *e, const struct sym_module **out)
{
	kernel_syms_wait(e);
	return symbolizer_modules(e->sym, out);
}

int prof_engine_nprocs(const struct prof_engine *e)
{
	return e->nprocs;
}

struct symbolizer *prof_engine_symbolizer(struct prof_engine *e)
{
	kernel_syms_wait(e);
	return e->sym;
}
