/* What the programs at sched_switch share: which task is traced, its state, and the wait event word of the task leaving the CPU. */
#ifndef DBTAP_BPF_WAITWORD_BPF_H
#define DBTAP_BPF_WAITWORD_BPF_H

#include "bpf/filter.bpf.h"
#include "bpf/wait.h" /* struct wait_pidbits */

/*
 * Where a backend's current wait event is: a pointer at wait_ptr_addr (the same address
 * in every process of a cluster: backends are forked, not executed), and the u32 at
 * wait_field_off behind it. PostgreSQL 14+ keeps my_wait_event_info pointing at the
 * word (offset 0); older versions write MyProc->wait_event_info.
 */
const volatile __u64 wait_ptr_addr = 0;
const volatile __u32 wait_field_off = 0;

/* The filter of filter.bpf.h, for a task that need not be the current one. */
static __always_inline bool filter_match_task(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);

	if (filter_tid)
		return tid == filter_tid;
	if (filter_postmaster)
		return tgid == filter_postmaster ||
		       BPF_CORE_READ(task, real_parent, tgid) == filter_postmaster;
	if (filter_use_pids)
		return bpf_map_lookup_elem(&filter_pids, &tgid) != NULL;
	return false; /* the wait programs always have a target */
}

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* The wait event of the current task (the one leaving the CPU); -1 when unreadable. */
static __always_inline long read_wait_event(void)
{
	__u64 ptr = 0;
	__u32 ev = 0;

	if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)wait_ptr_addr) || !ptr)
		return -1;
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(ptr + wait_field_off)))
		return -1;
	return ev;
}

/* The same through the pointer ptr when known (read before: one user read, not two). */
static __always_inline long read_wait_event_at(__u64 ptr)
{
	__u32 ev = 0;

	if (!ptr)
		return read_wait_event();
	if (bpf_probe_read_user(&ev, sizeof(ev), (void *)(ptr + wait_field_off)))
		return -1;
	return ev;
}

/*
 * The program runs at every context switch of the machine, and most are of tasks it
 * does not trace: the first thing each does is look both tasks up here, one bit each,
 * by thread id (wait_pidbits), with nothing else read or written for a task known to
 * be untraced. A task is looked at with the filter once, at its first switch; its bits
 * are cleared at its last, so that a reused id is looked at again. Ids above the
 * pid_max the map was sized for go through the filter every time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* pid_max / 64, set before load */
	__type(key, __u32);
	__type(value, struct wait_pidbits);
} pidbits SEC(".maps");

#define TASK_DEAD_BIT 0x80 /* TASK_DEAD: the last switch of an exiting thread */

/* Whether task t (thread id tid) is traced: its bits, or the filter the first time. */
static __always_inline bool task_traced(struct task_struct *t, __u32 tid, bool dead)
{
	__u32 idx = tid / 64;
	__u64 bit = 1ull << (tid % 64);
	struct wait_pidbits *b = bpf_map_lookup_elem(&pidbits, &idx);
	bool traced;

	if (!b)
		return filter_match_task(t);
	if (b->known & bit) {
		traced = b->traced & bit;
	} else {
		traced = filter_match_task(t);
		/* other tasks' bits share the word, on other CPUs: atomic */
		if (traced)
			__sync_fetch_and_or(&b->traced, bit);
		__sync_fetch_and_or(&b->known, bit);
	}
	if (dead) {
		__sync_fetch_and_and(&b->known, ~bit);
		__sync_fetch_and_and(&b->traced, ~bit);
	}
	return traced;
}

/*
 * next's thread id is a bpf_probe_read_kernel() away (next is an untyped argument of
 * the raw tracepoint): about 100 ns at every switch of the machine here, most of what
 * an untraced switch cost. So the tasks seen are kept in a direct-mapped cache by task
 * address (struct wait_tcslot, wait.h), a 64-bit word a slot read and written whole (two
 * CPUs filling one slot cannot leave one task's address with another's id): valid bit,
 * traced bit, the thread id (22 bits: pid_max is at most 2^22), and address bits 20-55
 * (the slot is bits 6-19, xor bits 20-33: task_structs are cache-line aligned, and
 * kernel addresses have bits 56-63 set, or the task is not cached). A slot is emptied at
 * its task's last switch (TASK_DEAD), before the address can be another task's.
 *
 * The slot's second word is wait's: the clock at a traced task's switch-in, while it
 * runs (0 otherwise). The switch-in of a cached task is then one store, and its
 * switch-out, which looks its thread up anyway, closes the wait that ended there
 * (switch_ends_read_slots()). A slot holding a running traced task is not given to
 * another task until that one leaves the CPU.
 */
#define TASKCACHE_BITS 14

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << TASKCACHE_BITS);
	__type(key, __u32);
	__type(value, struct wait_tcslot);
} taskcache SEC(".maps");

/* The slot of task address a, and its tag; false when a is not cacheable. */
static __always_inline bool taskcache_slot(__u64 a, __u32 *idx, __u64 *tag)
{
	if ((a >> 56) != 0xff || (a & 63))
		return false;
	*idx = ((a >> 6) ^ (a >> 20)) & ((1u << TASKCACHE_BITS) - 1);
	*tag = (a >> 20) & TC_TAG_MASK;
	return true;
}

/* Whether slot word w is the task of tag tag. */
static __always_inline bool taskcache_hit(__u64 w, __u64 tag)
{
	return (w & TC_VALID) && (w & TC_TAG_MASK) == tag;
}

/*
 * Fills slot with a task just looked up, unless it holds a traced task that is on CPU
 * now (its switch-in noted there: the switch-out needs it).
 */
static __always_inline void taskcache_fill(struct wait_tcslot *slot, __u64 tag, __u32 tid,
					   bool traced)
{
	__u64 w = *(volatile __u64 *)&slot->word;

	if (tid >= (1u << 22))
		return;
	if ((w & TC_VALID) && (w & TC_TRACED) && *(volatile __u64 *)&slot->t_in &&
	    !taskcache_hit(w, tag))
		return;
	*(volatile __u64 *)&slot->t_in = 0;
	*(volatile __u64 *)&slot->word = TC_VALID | (traced ? TC_TRACED : 0) |
					 (__u64)tid << TC_TID_SHIFT | tag;
}

/*
 * Whether next is traced, and its thread id: from the cache, or read and cached. *hit:
 * next's slot when next is cached and traced (the caller may note its switch-in there).
 */
static __always_inline bool next_traced_slot(struct task_struct *next, __u32 *tid,
					     struct wait_tcslot **hit)
{
	struct wait_tcslot *slot = NULL;
	__u64 tag = 0, w;
	__u32 idx = 0;
	bool traced;

	*hit = NULL;
	if (taskcache_slot((__u64)next, &idx, &tag)) {
		slot = bpf_map_lookup_elem(&taskcache, &idx);
		if (slot) {
			w = *(volatile __u64 *)&slot->word;
			if (taskcache_hit(w, tag)) {
				*tid = (w >> TC_TID_SHIFT) & ((1u << 22) - 1);
				if (w & TC_TRACED)
					*hit = slot;
				return w & TC_TRACED;
			}
		}
	}
	*tid = BPF_CORE_READ(next, pid);
	traced = task_traced(next, *tid, false);
	if (slot)
		taskcache_fill(slot, tag, *tid, traced);
	return traced;
}

/* Whether next is traced, and its thread id: from the cache, or read and cached. */
static __always_inline bool next_traced(struct task_struct *next, __u32 *tid)
{
	struct wait_tcslot *hit;

	return next_traced_slot(next, tid, &hit);
}

/* Task address a leaves the CPU for the last time: the address may be reused. */
static __always_inline void taskcache_forget(__u64 a)
{
	struct wait_tcslot *slot;
	__u64 tag;
	__u32 idx;

	if (!taskcache_slot(a, &idx, &tag))
		return;
	slot = bpf_map_lookup_elem(&taskcache, &idx);
	if (slot && taskcache_hit(*(volatile __u64 *)&slot->word, tag)) {
		*(volatile __u64 *)&slot->word = 0;
		*(volatile __u64 *)&slot->t_in = 0;
	}
}

/*
 * The programs at sched_switch are raw tracepoints, not tp_btf ones: libbpf finds a
 * tp_btf program's target in the kernel's full BTF, read and parsed at every start
 * (5.5 MB, twice over in memory), where a raw tracepoint is attached by name. Its
 * arguments are the tracepoint's own (btf_trace_sched_switch: preempt, prev, next,
 * prev_state since Linux 5.18), the task pointers untyped. The tracepoint fires
 * before the switch, while prev is still the current task: prev's fields are read
 * with plain loads through bpf_get_current_task_btf() (a pointer the verifier knows
 * the type of), its state is prev_state, and only next's fields need CO-RE reads
 * (bpf_probe_read_kernel): an untraced switch makes one, for next's thread id.
 */
static __always_inline unsigned int task_state_btf(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___old *)t)->state;
}

/* Both ends of a switch as the sched_switch programs of wait and waitspan need them. */
struct switch_ends {
	__u64 id;	/* prev's tgid << 32 | tid, as bpf_get_current_pid_tgid() has it */
	__u32 ptid, ntid;
	bool dead;	/* prev's last switch */
	bool pt, nt;	/* prev, next traced */
};

/*
 * Reads them at the raw tracepoint (prev is current: plain loads), and drops prev's
 * task-address cache entry at its last switch.
 */
static __always_inline void switch_ends_read(struct switch_ends *s, struct task_struct *prev,
					     struct task_struct *next, unsigned int prev_state)
{
	struct task_struct *cur = bpf_get_current_task_btf(); /* prev */

	s->ptid = cur->pid;
	s->id = (__u64)cur->tgid << 32 | s->ptid;
	s->dead = prev_state & TASK_DEAD_BIT;
	s->pt = task_traced(prev, s->ptid, s->dead);
	s->nt = next_traced(next, &s->ntid);
	if (s->dead)
		taskcache_forget((__u64)prev);
}

/*
 * switch_ends_read() for a program that keeps a traced task's switch-in in its cache
 * slot (wait): prev's traced bit from its own slot when it is cached (the word the
 * thread-id bits would be read for), and with it the clock of its switch-in, taken
 * (*t_in, 0 when none was noted: the slot was not prev's at its switch-in, or was given
 * to another task); *next_slot: next's slot where its switch-in can be noted (cached and
 * traced), NULL when it must be handled in full.
 */
static __always_inline void switch_ends_read_slots(struct switch_ends *s, struct task_struct *prev,
						   struct task_struct *next,
						   unsigned int prev_state, __u64 *t_in,
						   struct wait_tcslot **next_slot)
{
	struct task_struct *cur = bpf_get_current_task_btf(); /* prev */
	struct wait_tcslot *slot = NULL;
	__u64 tag = 0, w = 0;
	__u32 idx = 0;

	s->ptid = cur->pid;
	s->id = (__u64)cur->tgid << 32 | s->ptid;
	s->dead = prev_state & TASK_DEAD_BIT;
	*t_in = 0;
	if (taskcache_slot((__u64)prev, &idx, &tag))
		slot = bpf_map_lookup_elem(&taskcache, &idx);
	if (slot)
		w = *(volatile __u64 *)&slot->word;
	if (slot && taskcache_hit(w, tag)) {
		s->pt = w & TC_TRACED;
		if (s->pt) {
			*t_in = *(volatile __u64 *)&slot->t_in;
			if (*t_in)
				*(volatile __u64 *)&slot->t_in = 0;
		}
		/* the thread-id bits are cleared at a task's last switch */
		if (s->dead)
			task_traced(prev, s->ptid, true);
	} else {
		s->pt = task_traced(prev, s->ptid, s->dead);
		if (slot && !s->dead)
			taskcache_fill(slot, tag, s->ptid, s->pt);
	}
	if (s->dead)
		taskcache_forget((__u64)prev);
	s->nt = next_traced_slot(next, &s->ntid, next_slot);
}

/*
 * At sock_recv_length (Linux 6.4+), which fires as any socket read of the machine
 * returns, in the reading task: whether it is a read of data (not an error, not a
 * MSG_PEEK look that leaves the data to be read) by a traced thread. *id as
 * bpf_get_current_pid_tgid() has it. A backend reads its next message there.
 */
#define RECV_MSG_PEEK 2

static __always_inline bool recv_traced(int ret, int flags, __u64 *id)
{
	if (ret <= 0 || (flags & RECV_MSG_PEEK))
		return false;
	*id = bpf_get_current_pid_tgid();
	return task_traced((struct task_struct *)bpf_get_current_task_btf(), (__u32)*id, false);
}

#endif
