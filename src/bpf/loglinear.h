/* Histogram bucket arithmetic shared by BPF programs and user space (pure integer math). */
#ifndef DBTAP_BPF_LOGLINEAR_H
#define DBTAP_BPF_LOGLINEAR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Log-linear buckets: values below 2^LL_SUB_BITS have a bucket each; above, every
 * power of two [2^e, 2^(e+1)) is cut into 2^LL_SUB_BITS equal buckets. A bucket is
 * then at most 1/32 of its lower bound wide, so the midpoint of the bucket holding a
 * value is within 1/64 (1.6 %) of it: that is the bound on every percentile reported.
 * The whole u64 range fits in LL_BUCKETS buckets (15 KiB of u64 counters).
 */
#define LL_SUB_BITS 5
#define LL_SUB      (1u << LL_SUB_BITS)
#define LL_BUCKETS  ((64 - LL_SUB_BITS + 1) * LL_SUB)

/*
 * Display buckets (what is printed as bars): log2 like bpftrace's hist, or linear
 * like SystemTap's @hist_linear. Slot counts are fixed so BPF arrays can hold them.
 */
#define DISP_SLOTS      256
#define DISP_LOG2       0
#define DISP_LINEAR     1
/* Linear: slot 0 is "below MIN", slots 1..n the buckets, n+1 "above". */
#define DISP_LINEAR_MAX (DISP_SLOTS - 2)

#if defined(__VMLINUX_H__)
#define LL_INLINE static __always_inline
#else
#define LL_INLINE static inline __attribute__((always_inline))
#endif

/* floor(log2(v)) for v > 0, without loops (the verifier and the compiler both like it). */
LL_INLINE __u32 ll_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffull) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

LL_INLINE __u32 loglinear_index(__u64 v)
{
	__u32 e;

	if (v < LL_SUB)
		return (__u32)v;
	e = ll_log2(v);
	return (e - LL_SUB_BITS + 1) * LL_SUB + (__u32)((v >> (e - LL_SUB_BITS)) & (LL_SUB - 1));
}

/* Smallest value of bucket idx. */
LL_INLINE __u64 loglinear_lower(__u32 idx)
{
	__u32 e, sub;

	if (idx < LL_SUB)
		return idx;
	e = idx / LL_SUB + LL_SUB_BITS - 1;
	sub = idx % LL_SUB;
	return (__u64)(LL_SUB + sub) << (e - LL_SUB_BITS);
}

/* Width of bucket idx (1 for the exact small buckets). */
LL_INLINE __u64 loglinear_width(__u32 idx)
{
	if (idx < 2 * LL_SUB)
		return 1;
	return 1ull << (idx / LL_SUB - 1);
}

/* bpftrace's hist: slot 0 holds 0, slot k+1 holds [2^k, 2^(k+1)). */
LL_INLINE __u32 log2_slot(__u64 v)
{
	return v ? ll_log2(v) + 1 : 0;
}

LL_INLINE __u32 linear_slot(__u64 v, __u64 min, __u64 step, __u32 n)
{
	__u64 k;

	if (v < min)
		return 0;
	k = (v - min) / step;
	return k >= n ? n + 1 : (__u32)k + 1;
}

/* The display slot of v (already in display units) for a DISP_* kind. */
/* histrec.bpf.h's display configuration from a struct hist_spec (report/hist.h), before load. */
#define HISTREC_RODATA(skel, spec)                                              \
	do {                                                                    \
		(skel)->rodata->disp_kind = (spec)->kind;                       \
		(skel)->rodata->disp_min = (spec)->min;                         \
		(skel)->rodata->disp_step = (spec)->step ? (spec)->step : 1;    \
		(skel)->rodata->disp_n = (spec)->n;                             \
		(skel)->rodata->disp_div = 1000; /* ns -> us */                 \
	} while (0)

LL_INLINE __u32 disp_slot(__u32 kind, __u64 v, __u64 min, __u64 step, __u32 n)
{
	__u32 s = kind == DISP_LINEAR ? linear_slot(v, min, step, n) : log2_slot(v);

	return s < DISP_SLOTS ? s : DISP_SLOTS - 1;
}

#endif
