/* wait: every traced thread's time split at sched_switch into CPU and wait events, by statement. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "bpf/bestatus.bpf.h"
#include "bpf/filter.bpf.h"
#include "bpf/stmthash.bpf.h"
#include "bpf/wait.h"
#include "bpf/waitword.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Client:ClientRead: idle when no transaction is open */
const volatile __u32 idle_event = 0;
const volatile bool want_stacks = false;
const volatile bool self_time = false;

/*
 * The PgBackendStatus path: bestatus.bpf.h's configuration (bestatus_beentry_addr 0:
 * the USDT path, the programs at the probes tell the state and the statement instead),
 * and be_span_len: the bytes of the row from its start to past st_activity_raw, read in
 * one copy (st_changecount, st_procpid, st_activity_start_timestamp, st_state and
 * st_activity_raw at once, where bestatus.bpf.h reads the head, the state and the text's
 * address apart), 0 where the row's fields lie farther than WAIT_TEXT_LEN bytes (a
 * layout from debug info): then one read each.
 */
const volatile __u32 be_span_len = 0;

/* Accounting starts here for threads already running when the program was attached. */
__u64 t0 = 0;


/*
 * Not preallocated: an entry holds its stretches by key (some 1.3 KB), and only the
 * threads seen need one; an entry is made at a thread's first switch only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, WAIT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct wait_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAIT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct wait_proc);
} procs SEC(".maps");

/*
 * Preallocated: the program runs inside the scheduler, where allocating is best
 * avoided. A full map counts the stretch in drops instead of evicting another's time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAIT_MAX_AGGS);
	__type(key, struct wait_key);
	__type(value, struct wait_val);
} aggs SEC(".maps");

/* A sample text per statement hash, inserted once, for user space to normalize. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, WAIT_MAX_TEXTS);
	__type(key, __u64);
	__type(value, char[WAIT_TEXT_LEN]);
} texts SEC(".maps");

/*
 * The keys known to be in texts, direct-mapped by their low bits: a statement seen
 * before (most are) looks up one array word instead of the hash. texts never loses an
 * entry, so a key found here is there; a slot holds one key at a time, the last one.
 */
#define WAIT_TEXTSEEN 4096
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WAIT_TEXTSEEN);
	__type(key, __u32);
	__type(value, __u64);
} textseen SEC(".maps");

/* --stacks: kernel and user stacks at switch-out; user space sets the size (1 without). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[WAIT_TEXT_LEN]);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wait_drops);
} drops SEC(".maps");

static __always_inline struct wait_drops *drops_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&drops, &zero);
}


/*
 * Adds time to (process, statement, wait): ns and count, max the longest stretch in it.
 * A global function, checked once by the verifier: inlined at each of its callers (the
 * held stretches of both halves of a switch, and a thread's last switch) it multiplied
 * the paths of on_switch (14,866 instructions verified, 120 ms at a start at load 12).
 */
__noinline int wait_agg_add(const struct wait_key *k, __u64 ns, __u64 count, __u64 max)
{
	struct wait_val *v;

	if (!k)
		return 0;
	v = bpf_map_lookup_elem(&aggs, k);
	if (!v) {
		struct wait_val zero = {};
		/* EEXIST when another CPU created it meanwhile: the lookup finds it then */
		bpf_map_update_elem(&aggs, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&aggs, k);
		if (!v) {
			struct wait_drops *d = drops_get();
			if (d)
				d->aggs_full++;
			return 0;
		}
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, count);
	/* one process's stretches come one at a time: a plain max is enough */
	if (max > v->max_ns)
		v->max_ns = max;
	return 1;
}

/*
 * A held slot into the aggregate map (wait.h says what is held). The slot is emptied
 * before the map is added to, and user space reads the map before the threads: a read
 * between the two sees the time late, never twice. Global functions, checked once by
 * the verifier, like the adds below.
 */
__noinline int held_cpu_flush(struct wait_thread *e, __u32 i)
{
	struct wait_key k = { .kind = WAIT_KIND_CPU };
	struct wait_held_cpu h;

	if (!e)
		return 0;
	i &= WAIT_HELD_CPU - 1;
	if (!(e->hc_on & (1u << i)))
		return 0;
	h = e->held_cpu[i];
	e->hc_on &= ~(1u << i);
	k.stmt = h.stmt;
	k.tgid = e->tgid;
	wait_agg_add(&k, h.cpu_ns, 0, h.cpu_max);
	if (h.run_ns) {
		k.kind = WAIT_KIND_RUNNABLE;
		wait_agg_add(&k, h.run_ns, 0, h.run_max);
	}
	return 0;
}

__noinline int held_off_flush(struct wait_thread *e, __u32 i)
{
	struct wait_key k;
	struct wait_val v;

	if (!e)
		return 0;
	i &= WAIT_HELD_OFF - 1;
	if (!(e->ho_on & (1u << i)))
		return 0;
	k = e->held_off[i].k;
	v = e->held_off[i].v;
	e->ho_on &= ~(1u << i);
	wait_agg_add(&k, v.ns, v.count, v.max_ns);
	return 0;
}

/* Every held slot of a thread into the map: its last switch. */
static __always_inline void held_flush_all(struct wait_thread *e)
{
	for (__u32 i = 0; i < WAIT_HELD_CPU; i++)
		held_cpu_flush(e, i);
	for (__u32 i = 0; i < WAIT_HELD_OFF; i++)
		held_off_flush(e, i);
}

/*
 * The slot of a key in a two-way set: the one holding it, else a free one, else the
 * one the set's bit says goes next (flushed by the caller). Which one was taken marks
 * the other as next.
 */
static __always_inline __u32 held_way(__u32 on, __u32 *lru, __u32 set, bool hit0, bool hit1,
				      bool *fresh)
{
	__u32 i0 = set * 2, i;

	*fresh = false;
	if ((on & (1u << i0)) && hit0) {
		i = i0;
	} else if ((on & (2u << i0)) && hit1) {
		i = i0 + 1;
	} else {
		*fresh = true;
		if (!(on & (1u << i0)))
			i = i0;
		else if (!(on & (2u << i0)))
			i = i0 + 1;
		else
			i = i0 + ((*lru >> set) & 1);
	}
	*lru = (*lru & ~(1u << set)) | ((i == i0 ? 1u : 0u) << set);
	return i;
}

static __always_inline __u32 held_cpu_set(__u64 stmt)
{
	return (stmt ^ (stmt >> 31)) & (WAIT_HELD_CPU_SETS - 1);
}

/* A stretch's CPU time (and runnable time on CPU) under statement stmt: held. */
__noinline int held_cpu_add(struct wait_thread *e, __u64 stmt, __u64 cpu, __u64 run)
{
	__u32 set = held_cpu_set(stmt), lru, i;
	struct wait_held_cpu *h;
	bool fresh;

	if (!e)
		return 0;
	lru = e->hc_lru;
	i = held_way(e->hc_on, &lru, set, e->held_cpu[(set * 2) & (WAIT_HELD_CPU - 1)].stmt == stmt,
		     e->held_cpu[(set * 2 + 1) & (WAIT_HELD_CPU - 1)].stmt == stmt, &fresh);
	i &= WAIT_HELD_CPU - 1;
	e->hc_lru = lru;
	if (fresh) {
		held_cpu_flush(e, i);
		h = &e->held_cpu[i];
		h->stmt = stmt;
		h->cpu_ns = h->cpu_max = h->run_ns = h->run_max = 0;
		e->hc_on |= 1u << i;
	}
	h = &e->held_cpu[i];
	h->cpu_ns += cpu;
	if (cpu > h->cpu_max)
		h->cpu_max = cpu;
	h->run_ns += run;
	if (run > h->run_max)
		h->run_max = run;
	return 0;
}

/* Whether held key k is the thread's off-CPU key now (its switch-out's). */
static __always_inline bool held_off_is(const struct wait_thread *e, const struct wait_key *k)
{
	return k->stmt == e->stmt_off && k->kind == e->kind && k->event == e->event &&
	       k->stack == e->stack && k->ustack == e->ustack;
}

/* An off-CPU stretch of ns under the thread's off-CPU key (its switch-out's): held. */
__noinline int held_off_add(struct wait_thread *e, __u64 ns)
{
	__u32 set, lru, i;
	struct wait_held_off *h;
	bool fresh;

	if (!e)
		return 0;
	set = (e->stmt_off ^ (e->stmt_off >> 31) ^ e->event ^ e->kind) & (WAIT_HELD_OFF_SETS - 1);
	lru = e->ho_lru;
	i = held_way(e->ho_on, &lru, set,
		     held_off_is(e, &e->held_off[(set * 2) & (WAIT_HELD_OFF - 1)].k),
		     held_off_is(e, &e->held_off[(set * 2 + 1) & (WAIT_HELD_OFF - 1)].k), &fresh);
	i &= WAIT_HELD_OFF - 1;
	e->ho_lru = lru;
	if (fresh) {
		held_off_flush(e, i);
		h = &e->held_off[i];
		h->k.stmt = e->stmt_off;
		h->k.tgid = e->tgid;
		h->k.kind = e->kind;
		h->k.event = e->event;
		h->k.stack = e->stack;
		h->k.ustack = e->ustack;
		h->k.pad = 0;
		h->v.ns = h->v.count = h->v.max_ns = 0;
		e->ho_on |= 1u << i;
	}
	h = &e->held_off[i];
	h->v.ns += ns;
	h->v.count++;
	if (ns > h->v.max_ns)
		h->v.max_ns = ns;
	return 0;
}

static __always_inline void proc_seen(__u32 tgid, __u64 now)
{
	if (!bpf_map_lookup_elem(&procs, &tgid)) {
		struct wait_proc p = { .first = now };
		bpf_map_update_elem(&procs, &tgid, &p, BPF_NOEXIST);
	}
}

/* An empty entry, copied in (the entry is larger than the program's stack). */
const volatile struct wait_thread thread_zero = {};

/*
 * A thread seen for the first time: on CPU since start (or now). NULL when full. Only
 * the thread's own switches and probes make its entry, one at a time.
 */
static __noinline struct wait_thread *thread_new(__u32 tid, __u32 tgid, __u64 start,
						 bool oncpu)
{
	struct wait_thread *e;

	bpf_map_update_elem(&threads, &tid, (const void *)&thread_zero, BPF_NOEXIST);
	e = bpf_map_lookup_elem(&threads, &tid);
	if (!e) {
		struct wait_drops *d = drops_get();
		if (d)
			d->threads_full++;
		return NULL;
	}
	e->since = e->first = start;
	e->tgid = tgid;
	e->oncpu = oncpu;
	proc_seen(tgid, start);
	return e;
}

/*
 * PostgreSQL writes "postgres: USER DB HOST ..." into its argv area; read in the kernel
 * at the first switch-out and the first transaction, it gives the type of backends that
 * exit before user space looks. The second read replaces a start-up title.
 */
static __always_inline bool proc_title_read(struct wait_proc *p)
{
	struct task_struct *task;

	if (p->titled >= 2)
		return true;
	task = (struct task_struct *)bpf_get_current_task();
	bpf_probe_read_user_str(p->title, sizeof(p->title), (void *)BPF_CORE_READ(task, mm, arg_start));
	/* a backend just forked still shows the postmaster's command line: read again later */
	if (p->title[0] == 'p' && p->title[1] == 'o' && p->title[8] == ':' && p->title[9] == ' ')
		p->titled++;
	return p->titled >= 2;
}

static __always_inline bool proc_title(__u32 tgid)
{
	struct wait_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	return !p || proc_title_read(p);
}

/*
 * Closes the stretch in progress at now, charging it where it belongs. exec is the
 * task's sum_exec_runtime now (has_exec): of the stretch's wall time, what the kernel
 * counted as the task's CPU time is CPU, the rest is the stretch's kind off CPU. On
 * CPU, the rest is time the task held the CPU in the guest's eyes while the
 * hypervisor ran something else: it was waiting for a CPU. A stretch whose start was
 * not seen (an unpaired switch) is split right the same way.
 */
/* A global function: verified once, not once for each of its callers' paths. */
__noinline int stretch_close(struct wait_thread *e, __u64 now, __u64 exec, bool has_exec)
{
	__u64 ns, cpu;

	if (!e)
		return 0;
	ns = now > e->since ? now - e->since : 0;
	if (has_exec && e->exec_known)
		cpu = exec > e->exec ? exec - e->exec : 0;
	else
		cpu = e->oncpu ? ns : 0;
	if (cpu > ns)
		cpu = ns;
	if (cpu || e->oncpu)
		held_cpu_add(e, e->stmt, cpu, e->oncpu ? ns - cpu : 0);
	if (!e->oncpu)
		held_off_add(e, ns - cpu);
	e->since = now;
	if (has_exec) {
		e->exec = exec;
		e->exec_known = 1;
	}
	return 0;
}

STMTHASH_DEFINE(wait_text_hash, WAIT_TEXT_LEN)
STMTHASH_DEFINE_FLAT(wait_text_hash_wide, WAIT_TEXT_LEN)

/*
 * The key of the statement text at user address src, the text kept for user space once
 * per key. An unreadable text is the empty statement's key, or 0 when !or_empty. wide
 * (a constant): hashed eight bytes a step, at the switch-out (the same keys; the
 * programs at the probes, which trap anyway, keep the cheaper one to verify).
 */
static __always_inline __u64 text_key(const char *src, bool or_empty, bool wide)
{
	__u32 zero = 0, idx;
	char *text = bpf_map_lookup_elem(&scratch, &zero);
	__u64 key, *seen;

	if (!text)
		return 0;
	if (bpf_probe_read_user_str(text, WAIT_TEXT_LEN, src) < 0) {
		if (!or_empty)
			return 0;
		text[0] = '\0';
	}
	key = wide ? wait_text_hash_wide(text) : wait_text_hash(text, false);
	idx = key & (WAIT_TEXTSEEN - 1);
	seen = bpf_map_lookup_elem(&textseen, &idx);
	if (seen && *(volatile __u64 *)seen == key)
		return key;
	if (bpf_map_lookup_elem(&texts, &key) ||
	    !bpf_map_update_elem(&texts, &key, text, BPF_NOEXIST) ||
	    bpf_map_lookup_elem(&texts, &key)) {
		if (seen)
			*(volatile __u64 *)seen = key;
	} else {
		struct wait_drops *d = drops_get();
		if (d)
			d->texts_full++;
	}
	return key;
}

/*
 * text_key() at a switch-out, as a global function: the verifier checks its hash loop
 * once, not once for each way bestatus_stmt() comes to it.
 */
__noinline __u64 wait_switch_text_key(__u64 src)
{
	return text_key((const char *)src, false, true);
}

/*
 * The PgBackendStatus path: the statement, read from the backend leaving the CPU (the
 * current task: its memory is readable here) instead of trapped at its start and end.
 * debug_query_string is the running statement's text, NULL between statements; the
 * row's st_activity_start_timestamp tells a new statement at the same address, and
 * one that began and ended since the last switch-out, whose text is then the row's
 * st_activity_raw. A text is read and hashed only when one of them changed: a switch
 * otherwise reads two words. Sets e->stmt to the statement the CPU stretch now ending
 * ran (the latest one seen), and returns the one in progress (0 between statements)
 * for the stretch that starts. With track_activities off the timestamp stays 0: a
 * statement is known by its text then, read at every switch-out inside it.
 */
/* A field of the row's copy at off (the masks keep the verifier's bounds and alignment). */
#define WAIT_ROW_AT(buf, off, type) \
	(*(type *)((buf) + ((off) & (WAIT_TEXT_LEN - sizeof(type)))))

static __always_inline __u64 bestatus_stmt(struct wait_thread *e, __u32 tgid, __u32 *state,
					   bool *own)
{
	__u64 be = e->be, q = 0, ts = 0, raw = 0, src, h;
	bool first = false, have_raw = false, have_q = false;

	*state = 0;
	*own = false;
	if (!be) {
		/* MyBEEntry is set once, early in the backend's life: read until it is */
		be = bestatus_row(&e->be);
		first = be != 0;
	}
	if (be && be_span_len) {
		/* the row through the text's scratch buffer, not needed before the text */
		__u32 zero = 0;
		char *buf = bpf_map_lookup_elem(&scratch, &zero);
		__s32 pid;

		if (!buf || be_span_len > WAIT_TEXT_LEN ||
		    bpf_probe_read_user(buf, be_span_len, (void *)be))
			goto unreadable;
		/*
		 * Inside the backend's own write of its row (preempted there: odd
		 * st_changecount), or a row another backend took after this one left it:
		 * not read now, the next switch-out reads it (bestatus.bpf.h's rules).
		 */
		pid = WAIT_ROW_AT(buf, bestatus_procpid_off, __s32);
		if ((WAIT_ROW_AT(buf, bestatus_changecount_off, __s32) & 1) ||
		    (pid != (__s32)tgid && pid != 0))
			goto unreadable;
		*own = pid == (__s32)tgid;
		ts = WAIT_ROW_AT(buf, bestatus_activity_ts_off, __u64);
		*state = WAIT_ROW_AT(buf, bestatus_state_off, __u32);
		raw = WAIT_ROW_AT(buf, bestatus_activity_off, __u64);
		have_raw = true;
		/*
		 * With track_activities on the row tells whether a statement runs, and its
		 * text is the row's (the same text debug_query_string points at, up to the
		 * bytes read): debug_query_string, a user page more at every switch-out, is
		 * not read. A fast-path function call has no text (st_activity_raw empty,
		 * debug_query_string NULL): no statement, as before. Off (st_state disabled,
		 * or undefined before the backend's first report), only debug_query_string
		 * tells.
		 */
		if (*state == bestatus_st_running) {
			q = raw;
			have_q = true;
		} else if (bestatus_between(*state) || *state == bestatus_st_fastpath) {
			have_q = true;
		}
	} else if (be) {
		bpf_probe_read_user(&ts, sizeof(ts), (void *)(be + bestatus_activity_ts_off));
		/* st_state is wanted at a ClientRead only: read then (backend_busy) */
		*state = ~0u;
	}
	if (!have_q)
		bpf_probe_read_user(&q, sizeof(q), (void *)bestatus_query_addr);
	/*
	 * The row first seen between statements: its timestamp is the last statement's,
	 * which may have run before tracing started (a backend already idle then), not in
	 * the stretch now ending. It is where changes are counted from.
	 */
	if (first && !q) {
		e->q_ts = ts;
		e->q_ptr = 0;
		return 0;
	}
	if (q == e->q_ptr && ts == e->q_ts && (ts || !q))
		return q ? e->q_hash : 0;
	src = q;
	if (!src && ts && ts != e->q_ts) {
		if (have_raw)
			src = raw;
		else if (bpf_probe_read_user(&src, sizeof(src),
					     (void *)(be + bestatus_activity_off)))
			src = 0;
	}
	if (src) {
		h = wait_switch_text_key(src);
		/* not readable now (a page not present): again at the next switch-out */
		if (!h)
			return q ? e->stmt : 0;
		e->q_hash = h;
		e->stmt = h;
		/* the first statements give the title its user and database (proc_title) */
		if (!e->titled)
			e->titled = proc_title(e->tgid);
	}
	e->q_ptr = q;
	e->q_ts = ts;
	return q ? e->q_hash : 0;
unreadable:
	/* the row first seen is looked at again as such */
	if (first)
		e->be = 0;
	bpf_probe_read_user(&q, sizeof(q), (void *)bestatus_query_addr);
	return q ? e->stmt : 0;
}

/* What the switch-out's look at the row found (wait_stmt_look()). */
struct be_look {
	__u32 state; /* st_state; 0 unreadable, ~0 not read (backend_busy() reads it) */
	__u32 own;   /* the row said it was this backend's */
};

/* bestatus_stmt() as a global function: its paths are verified once, apart. */
__noinline __u64 wait_stmt_look(struct wait_thread *e, __u32 tgid, struct be_look *l)
{
	__u32 st = ~0u;
	bool own = false;
	__u64 r;

	if (!e || !l)
		return 0;
	r = bestatus_stmt(e, tgid, &st, &own);
	l->state = st;
	l->own = own;
	return r;
}

/*
 * Whether a backend waiting for its client is inside a transaction (or a statement:
 * COPY FROM STDIN reads its data in ClientRead): idle otherwise. track_activities off
 * leaves st_state STATE_DISABLED: idle. st is the state bestatus_stmt() read with the
 * row (0 when it could not), ~0 when it read the timestamp alone: read here then.
 */
static __always_inline bool backend_busy(struct wait_thread *e, __u32 st)
{
	if (!bestatus_beentry_addr)
		return e->in_xact;
	if (!e->be)
		return false;
	if (st == ~0u && bestatus_state_read(e->be, &st))
		return false;
	return bestatus_busy(st);
}

/*
 * The wait event of the backend leaving the CPU (read_wait_event()), through the pointer
 * kept in its entry while its row says it is its own (own): one user read, not two.
 */
static __always_inline long wait_event_read(struct wait_thread *e, bool own)
{
	__u64 ptr = own ? e->wptr : 0;
	__u32 ev = 0;

	if (!ptr) {
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)wait_ptr_addr) || !ptr)
			return -1;
		if (own)
			e->wptr = ptr;
	}
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(ptr + wait_field_off)))
		return -1;
	return ev;
}

/*
 * A switch-in of the thread noted at t_in in its task's cache slot (waitword.bpf.h):
 * its stretch off CPU ended there, its CPU time from there on is its next stretch's.
 */
static __always_inline void switched_in_at(struct wait_thread *e, __u64 t_in)
{
	if (e->preempted) {
		/* back from a preemption: its CPU stretch goes on */
		e->preempted = 0;
		return;
	}
	if (e->oncpu || t_in < e->since) {
		/* seeded as running while it was runnable, or a switch-out not seen */
		struct wait_drops *d = drops_get();
		if (d)
			d->unpaired++;
		return;
	}
	/* off CPU the task's CPU time does not move: all of the stretch is off CPU */
	stretch_close(e, t_in, 0, false);
	e->oncpu = 1;
}

/* The task's CPU time by the kernel's count: a task that is not current, through CO-RE. */
static __always_inline __u64 task_exec(struct task_struct *t)
{
	return BPF_CORE_READ(t, se.sum_exec_runtime);
}

/*
 * The two halves of a switch are functions of their own (global, not inlined): the
 * verifier checks each once, alone, where inlined into the program it went through
 * every path of one for each path of the other (11,000 verified instructions; 2,400
 * now). So the arguments are scalars: id = tgid << 32 | tid as bpf_get_current_pid_tgid()
 * has it, how = prev_state | preempt << 32, next's address.
 */

/*
 * prev (the current task) leaves the CPU; 1 when the switch is counted. t_in: the clock
 * at its switch-in when that was noted in its cache slot (0: seen in full, or not seen).
 */
__noinline int wait_switch_out(struct bpf_raw_tracepoint_args *ctx, __u64 id, __u64 how,
			       __u64 now, __u64 t_in)
{
	struct task_struct *prev = bpf_get_current_task_btf();
	__u32 tid = (__u32)id, tgid = id >> 32, prev_state = (__u32)how;
	bool preempt = how >> 32;
	struct wait_thread *e = bpf_map_lookup_elem(&threads, &tid);
	struct wait_drops *d;
	long ev;

	if (!e) {
		/* running since before the attach (its time starts at t0), or since t_in */
		e = thread_new(tid, tgid, t_in ? t_in : t0 && t0 < now ? t0 : now, true);
		if (!e)
			return 0;
	} else if (t_in) {
		switched_in_at(e, t_in);
	}
	d = drops_get();
	/*
	 * Taken off the CPU while still TASK_RUNNING (preempted, or between setting its
	 * sleeping state and calling schedule(): it stays queued) it waits for a CPU, not
	 * for its wait event, even with one set: a backend preempted between
	 * pgstat_report_wait_start() and its sleep would otherwise count that wait twice.
	 * Its CPU stretch goes on when the thread runs again, and the switch-out that ends
	 * it (a wait, or its exit) splits its wall time into the kernel's CPU time and the
	 * rest, runnable. Only a statement boundary seen in the row closes it here: a
	 * backend preempted as it wakes its client (which may answer before the backend
	 * reads again: no wait between the two statements) has its CPU time so far charged
	 * to the statement that ended. Its wait event is not read.
	 */
	if (e->oncpu && !(prev_state & TASK_DEAD_BIT) && (preempt || !task_state_btf(prev))) {
		if (bestatus_beentry_addr) {
			struct be_look pl = { .state = ~0u };
			__u64 was = e->stmt, next = wait_stmt_look(e, tgid, &pl);
			if (e->stmt != was || next != was) {
				stretch_close(e, now, prev->se.sum_exec_runtime, true);
				e->stmt = next;
			}
		}
		e->preempted = 1;
		return 1;
	}
	e->preempted = 0;
	if (!e->oncpu && d)
		d->unpaired++;
	__u64 next_stmt = e->stmt;
	struct be_look look = { .state = ~0u };
	if (bestatus_beentry_addr && !(prev_state & TASK_DEAD_BIT))
		next_stmt = wait_stmt_look(e, tgid, &look);
	/* the kernel has charged prev's slice (update_curr) before this tracepoint */
	stretch_close(e, now, prev->se.sum_exec_runtime, true);
	if (prev_state & TASK_DEAD_BIT) {
		struct wait_proc *p = bpf_map_lookup_elem(&procs, &tgid);
		if (p && tid == tgid)
			p->last = now;
		held_flush_all(e);
		bpf_map_delete_elem(&threads, &tid);
		return 1;
	}
	/*
	 * The first switch-out reads the title: servers without USDT probes have no other.
	 * Each thread looks its process up until it sees the title read (a backend just
	 * forked still shows the postmaster's command line), then no more.
	 */
	if (!e->title_read) {
		struct wait_proc *pp = bpf_map_lookup_elem(&procs, &tgid);
		if (pp && !pp->titled)
			proc_title_read(pp);
		if (!pp || pp->titled)
			e->title_read = 1;
	}
	e->oncpu = 0;
	e->stmt = next_stmt;
	e->stmt_off = e->stmt;
	e->stack = e->ustack = 0;
	/* still runnable after a switch not seen in pair (above): waiting for a CPU */
	if (preempt || !task_state_btf(prev)) {
		e->event = 0;
		e->kind = WAIT_KIND_RUNNABLE;
		return 1;
	}
	ev = wait_event_read(e, look.own);
	if (ev < 0) {
		e->event = 0;
		e->kind = WAIT_KIND_UNREADABLE;
	} else if (ev) {
		e->event = ev;
		e->kind = ev == idle_event && !backend_busy(e, look.state) ? WAIT_KIND_IDLE :
									  WAIT_KIND_WAIT;
	} else {
		e->event = 0;
		e->kind = WAIT_KIND_UNLABELLED;
	}
	if (want_stacks && e->kind != WAIT_KIND_RUNNABLE) {
		long k = bpf_get_stackid(ctx, &stacks, 0);
		long u = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		if (k >= 0)
			e->stack = k + 1;
		if (u >= 0)
			e->ustack = u + 1;
		if ((k < 0 || u < 0) && d)
			d->stacks_lost++;
	}
	return 1;
}

/* next (thread id tid) takes the CPU; 1 when the switch is counted. */
__noinline int wait_switch_in(__u64 next_addr, __u32 tid, __u64 now)
{
	struct task_struct *next = (struct task_struct *)next_addr;
	struct wait_thread *e = bpf_map_lookup_elem(&threads, &tid);

	if (e && e->preempted) {
		/* back from a preemption: its CPU stretch goes on */
		e->preempted = 0;
		return 1;
	}
	if (!e) {
		/* a thread forked after the attach, running for the first time */
		e = thread_new(tid, BPF_CORE_READ(next, tgid), now, false);
		if (!e)
			return 0;
		e->exec = task_exec(next);
		e->exec_known = 1;
		e->oncpu = 1;
		return 1;
	}
	if (e->oncpu) {
		/* seeded as running while it was runnable, or a switch-out not seen */
		struct wait_drops *d = drops_get();
		if (d)
			d->unpaired++;
	}
	stretch_close(e, now, task_exec(next), true);
	e->oncpu = 1;
	return 1;
}

/*
 * The tracepoint fires on the CPU both threads share, before the switch: prev is
 * current (a raw tracepoint: waitword.bpf.h says why, and what its arguments are).
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 t_self = self_time ? bpf_ktime_get_ns() : 0, now, t_in;
	struct wait_tcslot *next_slot;
	struct wait_drops *d;
	struct switch_ends s;
	bool out, in;

	switch_ends_read_slots(&s, prev, next, prev_state, &t_in, &next_slot);
	if (!s.pt && !s.nt) {
		if (self_time && (d = drops_get())) {
			d->self_ns[0] += bpf_ktime_get_ns() - t_self;
			d->self_runs[0]++;
		}
		return 0;
	}
	now = bpf_ktime_get_ns();
	out = s.pt && wait_switch_out((struct bpf_raw_tracepoint_args *)ctx, s.id,
				      prev_state | (__u64)preempt << 32, now, t_in);
	/*
	 * next cached: its switch-in is the clock in its slot, taken by its switch-out (or
	 * a probe of the USDT path, or user space reading a stretch in progress)
	 */
	if (next_slot) {
		*(volatile __u64 *)&next_slot->t_in = now;
		in = true;
	} else {
		in = s.nt && wait_switch_in((__u64)next, s.ntid, now);
	}

	d = drops_get();
	if ((out || in) && d)
		d->switches++;
	if (self_time && d) {
		d->self_ns[1] += bpf_ktime_get_ns() - t_self;
		d->self_runs[1]++;
	}
	return 0;
}

/* The floor for bench/wait-switch.sh: the cost of any program at this tracepoint. */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch_empty)
{
	return 0;
}

/* The clock at the current task's switch-in noted in its cache slot, taken; 0 none. */
static __always_inline __u64 t_in_take_current(void)
{
	__u64 a = (__u64)bpf_get_current_task(), tag, w, t = 0;
	struct wait_tcslot *slot;
	__u32 idx;

	if (!taskcache_slot(a, &idx, &tag) || !(slot = bpf_map_lookup_elem(&taskcache, &idx)))
		return 0;
	w = *(volatile __u64 *)&slot->word;
	if (taskcache_hit(w, tag) && (w & TC_TRACED)) {
		t = *(volatile __u64 *)&slot->t_in;
		if (t)
			*(volatile __u64 *)&slot->t_in = 0;
	}
	return t;
}

/*
 * The current thread's entry for the USDT programs, made when missing; a switch-in
 * noted in its cache slot is taken first, so that the statement's split of its CPU
 * time falls inside a CPU stretch.
 */
static __always_inline struct wait_thread *thread_current(__u64 now)
{
	__u64 id = bpf_get_current_pid_tgid(), t_in = t_in_take_current();
	__u32 tid = (__u32)id;
	struct wait_thread *e = bpf_map_lookup_elem(&threads, &tid);

	if (e) {
		if (t_in)
			switched_in_at(e, t_in);
		return e;
	}
	return thread_new(tid, id >> 32, t_in ? t_in : now, true);
}

/*
 * The statement changes: the CPU time so far belongs to the one before. The kernel
 * updates sum_exec_runtime of a running task only at ticks and switches, so the
 * split is by wall time: exec moves on by as much, and the next switch charges the
 * slice's remaining CPU time by the kernel's count.
 */
static __always_inline void stmt_set(struct wait_thread *e, __u64 stmt, __u64 now)
{
	if (e->oncpu) {
		__u64 ns = now > e->since ? now - e->since : 0, exec = e->exec + ns;
		stretch_close(e, now, exec, e->exec_known);
	}
	e->stmt = stmt;
}

SEC("usdt")
int BPF_USDT(query_start, const char *query)
{
	__u64 now = bpf_ktime_get_ns(), key;
	struct wait_thread *e;

	if (!filter_match())
		return 0;
	e = thread_current(now);
	if (!e)
		return 0;
	key = text_key(query, true, false);
	if (key)
		stmt_set(e, key, now);
	return 0;
}

/* The probes without arguments: the end of a statement, transaction starts and ends. */
static __always_inline void on_event(__u64 which)
{
	__u64 now = bpf_ktime_get_ns();
	struct wait_thread *e;

	if (!filter_match())
		return;
	e = thread_current(now);
	if (!e)
		return;
	switch (which) {
	case WAIT_EV_QUERY_DONE:
		stmt_set(e, 0, now);
		break;
	case WAIT_EV_TXN_START:
		e->in_xact = 1;
		proc_title(e->tgid);
		break;
	case WAIT_EV_TXN_COMMIT:
		e->in_xact = 0;
		break;
	case WAIT_EV_TXN_ABORT:
		/* query__done does not fire for a statement that fails: its abort ends it */
		e->in_xact = 0;
		stmt_set(e, 0, now);
		break;
	}
}

/* The cookie says which probe: attach.c's multi-uprobe link, or its uprobe per site. */
SEC("uprobe.multi")
int event_multi(struct pt_regs *ctx)
{
	on_event(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uprobe")
int event_uprobe(struct pt_regs *ctx)
{
	on_event(bpf_get_attach_cookie(ctx));
	return 0;
}
