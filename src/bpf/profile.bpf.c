/* profile: on a sampling perf event or a raw tracepoint, takes user and kernel stacks and counts them per thread. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* each hit takes stacks (microseconds): the filter's two copies are nothing beside them */
#define FILTER_PARENT_BY_COPY
#include "bpf/filter.bpf.h"
#include "bpf/profile.h"
#include "bpf/dropstats.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 want_user = 1;
const volatile __u32 want_kernel = 1;
const volatile __u32 ring_samples = 0; /* also stream each sample with its time */
const volatile __u32 per_thread = 0;   /* events bound to the target's threads (-p, -t) */

/*
 * Sizes are set before load from the options (bpf/profile.c). No hash map here is
 * preallocated: the kernel (6.1 on) allocates hash entries from a cache that is safe in
 * the sampling interrupt, and preallocating counts, threads and procs cost 5-15 ms of
 * every start (65,536 entries initialised one by one) for a profile that uses a few
 * hundred. An allocation that fails counts as the map being full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct profile_key);
	__type(value, __u64);
} counts SEC(".maps");

/*
 * Not STACK_TRACE maps: those keep one stack per hash bucket and refuse (or
 * overwrite) a second stack that lands in the same bucket, which at 10,000 distinct
 * stacks loses several per cent. Hash maps keyed by a 64-bit hash of the addresses
 * have no such collisions; entries are allocated as they come (1 KB each, so not
 * preallocated). User and kernel stacks have a map each: a map's allocator keeps one
 * spare entry per CPU for these sizes, refilled after the interrupt, so a sample with
 * a new user stack and a new kernel stack needs two allocators.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct profile_stack);
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct profile_stack);
} kstacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct profile_thread);
} threads SEC(".maps");

/* Processes seen: the first sample of each tells user space to read its maps. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} procs SEC(".maps");

/*
 * Threads that have an event of their own (per_thread), keyed by thread id, the
 * event's cookie. A thread created while its creator's event was already open also
 * carries the inherited copy of that event; when user space finds the thread and
 * opens one for it too, only the samples of its own event count. Sized down to one
 * entry before load when the events are per CPU (bpf/profile.c): its 65,536 buckets
 * alone took 1-5 ms of a start.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} own_event SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} ring SEC(".maps");

/* Two scratch stacks per CPU (user, kernel): too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct profile_stack);
} scratch SEC(".maps");

DBTAP_STATS_MAP(PROFILE_ST_MAX)

#if defined(__TARGET_ARCH_x86)
/*
 * A sample at a function's first instructions (or at its ret) finds the frame-pointer
 * chain one frame short: the function has not pushed its frame yet (or has popped it),
 * so the chain goes from it straight to its caller's caller, and the caller is lost.
 * Samples land there more often than the share of instructions says (the fetch of a
 * new function stalls). There the return address is at [sp] (entry: endbr64 or push
 * %rbp; ret) or [sp+8] (mov %rsp,%rbp just after the push). It is taken when a call
 * instruction ends right before it, and when the chain does not already hold it.
 */
static __always_inline __u64 entry_return(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	unsigned char c[4], k[7];
	__u64 ip, sp, bp, at, ret = 0, fpret = 0;

	if (!regs)
		return 0;
	ip = BPF_CORE_READ(regs, ip);
	sp = BPF_CORE_READ(regs, sp);
	bp = BPF_CORE_READ(regs, bp);
	if (bpf_probe_read_user(c, sizeof(c), (void *)ip))
		return 0;
	if (c[0] == 0x55 || c[0] == 0xc3 || (c[0] == 0xf3 && c[1] == 0xc3) ||
	    (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa))
		at = sp;
	else if (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5)
		at = sp + 8;
	else
		return 0;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)at) || ret < 8)
		return 0;
	if (bpf_probe_read_user(&fpret, sizeof(fpret), (void *)(bp + 8)) == 0 && fpret == ret)
		return 0;
	/* call rel32 (e8, 5 bytes) or call through a register or memory (ff /2, 2 to 7 bytes) */
	if (bpf_probe_read_user(k, sizeof(k), (void *)(ret - 7)))
		return 0;
	if (k[2] == 0xe8)
		return ret;
	for (int i = 0; i < 6; i++)
		if (k[i] == 0xff && (k[i + 1] & 0x38) == 0x10)
			return ret;
	return 0;
}
#else
static __always_inline __u64 entry_return(void)
{
	return 0;
}
#endif

/*
 * The stack's hash, a frame per bpf_loop() step: the verifier checks the step once,
 * where an open loop over up to 127 frames was checked frame by frame in each of the
 * two inlined copies of take_stack() (most of the program's 9,600 verified
 * instructions, and of the verifier's time at every start; 1,300 now).
 */
struct stack_hash {
	struct profile_stack *s;
	__u64 h;
};

static long stack_hash_step(__u64 i, void *arg)
{
	struct stack_hash *c = arg;

	if (i >= PROFILE_MAX_DEPTH)
		return 1;
	c->h = (c->h ^ c->s->ip[i]) * 0x100000001b3ULL;
	c->h ^= c->h >> 29;
	return 0;
}

/*
 * Takes one stack into the scratch slot and stores it under its hash. Returns the
 * hash, 0 when there is no stack, or 1 (never a real hash) when it could not be stored.
 */
static __always_inline __u64 take_stack(void *ctx, __u32 slot, void *stacks, __u64 flags,
					 __u32 err_stat, __u64 fix_entry)
{
	struct profile_stack *s = bpf_map_lookup_elem(&scratch, &slot);
	__u64 h;
	long n;

	if (!s)
		return 0;
	if (fix_entry) {
		/* the chain one slot further on, the caller put back after the leaf */
		n = bpf_get_stack(ctx, &s->ip[1], sizeof(s->ip) - sizeof(s->ip[0]), flags);
		if (n < 0) {
			stat_inc(err_stat);
			return 0;
		}
		n /= sizeof(__u64);
		if (n == 0)
			return 0;
		s->ip[0] = s->ip[1];
		s->ip[1] = fix_entry;
		n++;
		stat_inc(PROFILE_ST_ENTRY_FIXED);
	} else {
		n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), flags);
		if (n < 0) {
			stat_inc(err_stat);
			return 0;
		}
		n /= sizeof(__u64);
		if (n == 0)
			return 0;
	}
	s->len = n;
	s->flags = n >= PROFILE_MAX_DEPTH ? PROFILE_STACK_TRUNCATED : 0;
	struct stack_hash sh = { .s = s, .h = 0xcbf29ce484222325ULL };
	bpf_loop(n, stack_hash_step, &sh, 0);
	h = sh.h ^ (__u64)n << 56;
	if (h <= 1)
		h += 2;
	if (!bpf_map_lookup_elem(stacks, &h) &&
	    bpf_map_update_elem(stacks, &h, s, BPF_NOEXIST) < 0 &&
	    !bpf_map_lookup_elem(stacks, &h)) {
		stat_inc(PROFILE_ST_STACKS_FULL);
		return 1;
	}
	return h;
}

static __always_inline void note_thread(__u32 pid, __u32 tid)
{
	struct profile_thread t = { .pid = pid };
	__u8 one = 1;

	if (bpf_map_lookup_elem(&threads, &tid))
		return;
	bpf_get_current_comm(t.comm, sizeof(t.comm));
	if (bpf_map_update_elem(&threads, &tid, &t, BPF_NOEXIST) < 0 &&
	    !bpf_map_lookup_elem(&threads, &tid))
		stat_inc(PROFILE_ST_THREADS_FULL);
	if (bpf_map_update_elem(&procs, &pid, &one, BPF_NOEXIST) == 0) {
		struct profile_rec *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);

		if (!r) {
			stat_inc(PROFILE_ST_RING_FULL);
			return;
		}
		r->kind = PROFILE_REC_PROC;
		r->cpu = bpf_get_smp_processor_id();
		r->pid = pid;
		r->tid = tid;
		r->time_ns = bpf_ktime_get_ns();
		r->ustack = r->kstack = 0;
		bpf_ringbuf_submit(r, 0);
	}
}

static __always_inline int sample(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct profile_key k = { .pid = id >> 32, .tid = (__u32)id };
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 one = 1, *v;

	if (!filter_match())
		return 0;
	stat_inc(PROFILE_ST_SAMPLES);
	/* A kernel thread has no user stack to take. */
	if (want_user && !(BPF_CORE_READ(task, flags) & 0x00200000 /* PF_KTHREAD */)) {
		k.ustack = take_stack(ctx, 0, &ustacks, BPF_F_USER_STACK, PROFILE_ST_USTACK_ERR,
					     entry_return());
		if (k.ustack == 1)
			return 0;
	}
	if (want_kernel) {
		k.kstack = take_stack(ctx, 1, &kstacks, 0, PROFILE_ST_KSTACK_ERR, 0);
		if (k.kstack == 1)
			return 0;
	}
	note_thread(k.pid, k.tid);
	v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
	} else if (bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST) < 0) {
		/* another CPU may have added it in between */
		v = bpf_map_lookup_elem(&counts, &k);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			stat_inc(PROFILE_ST_COUNTS_FULL);
	}
	if (ring_samples) {
		struct profile_rec *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);

		if (!r) {
			stat_inc(PROFILE_ST_RING_FULL);
			return 0;
		}
		r->kind = PROFILE_REC_SAMPLE;
		r->cpu = bpf_get_smp_processor_id();
		r->pid = k.pid;
		r->tid = k.tid;
		r->time_ns = bpf_ktime_get_ns();
		r->ustack = k.ustack;
		r->kstack = k.kstack;
		bpf_ringbuf_submit(r, 0);
	}
	return 0;
}

SEC("perf_event")
int profile_perf(struct bpf_perf_event_data *ctx)
{
	if (per_thread) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		/* an inherited copy has cookie 0 (the kernel does not copy cookies) */
		if (bpf_get_attach_cookie(ctx) != tid && bpf_map_lookup_elem(&own_event, &tid))
			return 0;
	}
	return sample(ctx);
}

/* Tracepoints by name through raw tracepoints: no tracefs needed. */
SEC("raw_tp")
int profile_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	return sample(ctx);
}
