/* The statement hash on the BPF side, once for every program that keys statements. */
#ifndef DBTAP_BPF_STMTHASH_BPF_H
#define DBTAP_BPF_STMTHASH_BPF_H

#include "bpf/stathash.h"

/*
 * stathash.h's automaton, filled by user space before load (stathash_dfa_fill()). Read
 * only: the verifier checks the loop step once, whatever the bytes.
 */
const volatile __u16 stathash_dfa[STATHASH_DFA_ENTRIES];

struct stmthash_ctx {
	const char *text;
	__u32 row;
	bool raw;
	struct stathash sh;
};

/*
 * STMTHASH_DEFINE(NAME, SIZE) defines __u64 NAME(const char *buf, bool raw): the key of
 * the NUL-terminated statement text in buf (SIZE bytes, a power of two: the step masks
 * its index with a constant the verifier sees), literal-blind, or of the exact bytes
 * when raw. Never 0.
 */
#define STMTHASH_DEFINE(NAME, SIZE)                                                     \
	static long NAME##_step(__u32 i, void *arg)                                     \
	{                                                                               \
		struct stmthash_ctx *c = arg;                                           \
		unsigned char ch = c->text[i & ((SIZE) - 1)];                           \
                                                                                        \
		if (!ch)                                                                \
			return 1;                                                       \
		if (c->raw)                                                             \
			stathash_mix(&c->sh, (char)ch);                                 \
		else                                                                    \
			stathash_dfa_step(&c->sh, &c->row, (const __u16 *)stathash_dfa, \
					  ch);                                          \
		return 0;                                                       \
	}                                                                               \
	static __always_inline __u64 NAME(const char *buf, bool raw)                    \
	{                                                                               \
		struct stmthash_ctx c = { .text = buf, .row = STATHASH_DFA_START,       \
					  .raw = raw };                                 \
                                                                                        \
		stathash_init(&c.sh);                                                   \
		bpf_loop((SIZE), NAME##_step, &c, 0);                                   \
		return stathash_final(&c.sh);                                           \
	}

/*
 * STMTHASH_DEFINE_WIDE(NAME, SIZE): the same literal-blind keys, eight bytes a
 * bpf_loop() step with the automaton's row and the hash in registers between them, for
 * a program that hashes in the scheduler's path (wait at a switch-out): a step a byte
 * spends most of its time in the step's call and in reloading its state. Timed through
 * BPF_PROG_TEST_RUN on a 56-byte statement: 250 ns a hash against 660-900 a byte a step;
 * sixteen a step gave 225. It costs the verifier more (wait's on_switch: 7,334
 * instructions against 5,384), so programs off that path keep STMTHASH_DEFINE.
 */
#define STMTHASH_WIDE 8
#define STMTHASH_DEFINE_WIDE(NAME, SIZE)                                                \
	static long NAME##_step(__u32 i, void *arg)                                     \
	{                                                                               \
		struct stmthash_ctx *c = arg;                                           \
		struct stathash sh = c->sh;                                             \
		__u32 row = c->row, k;                                                  \
		long done = 0;                                                          \
                                                                                        \
		for (k = 0; k < STMTHASH_WIDE; k++) {                                   \
			unsigned char ch =                                              \
				c->text[(i * STMTHASH_WIDE + k) & ((SIZE) - 1)];        \
                                                                                        \
			if (!ch) {                                                      \
				done = 1;                                               \
				break;                                                  \
			}                                                               \
			stathash_dfa_step(&sh, &row, (const __u16 *)stathash_dfa, ch);  \
		}                                                                       \
		c->sh = sh;                                                             \
		c->row = row;                                                           \
		return done;                                                            \
	}                                                                               \
	static __always_inline __u64 NAME(const char *buf)                              \
	{                                                                               \
		struct stmthash_ctx c = { .text = buf, .row = STATHASH_DFA_START };     \
                                                                                        \
		stathash_init(&c.sh);                                                   \
		bpf_loop((SIZE) / STMTHASH_WIDE, NAME##_step, &c, 0);                  \
		return stathash_final(&c.sh);                                           \
	}

/*
 * STMTHASH_DEFINE_FLAT(NAME, SIZE): the keys of STMTHASH_DEFINE_WIDE (eight bytes a
 * bpf_loop() step), with a step the verifier walks once: unrolled, and no branch on a
 * byte's value. The bytes after the NUL go through the automaton too but mix nothing
 * (a mask), and what a byte mixes (nothing, the literal mark, the byte) is a mask too;
 * the step where the text ends returns 1. The one branch left a byte is the table's
 * bound. A step with a loop and a branch a byte is walked once per byte and outcome:
 * 2,882 instructions verified in stat's look against a few hundred.
 */
#define STMTHASH_FLAT_STEP(c, sh, row, live, base, k, SIZE)                             \
	do {                                                                            \
		__u64 ch_ = (unsigned char)(c)->text[((base) + (k)) & ((SIZE) - 1)];    \
		__u64 idx_ = (__u64)(row) * 256 + ch_;                                  \
		struct stathash t_ = (sh);                                              \
		__u64 e_, em_, v_, m_;                                                  \
                                                                                        \
		if (idx_ >= STATHASH_DFA_ENTRIES)                                       \
			idx_ = 0; /* cannot happen: rows come from the table */        \
		e_ = ((const __u16 *)stathash_dfa)[idx_];                               \
		(row) = e_ & 0xff;                                                      \
		em_ = e_ >> 8; /* STATHASH_EMIT_NONE 0, _MARK 1, _BYTE 2 */             \
		(live) &= (ch_ + 255) >> 8; /* 0 from the NUL on */                     \
		v_ = ch_ ^ ((ch_ ^ STATHASH_MARK_LITERAL) & -(em_ & 1));                \
		m_ = -((live) & ((em_ | em_ >> 1) & 1));                                \
		stathash_mix_value(&t_, (__u32)v_);                                     \
		(sh).h ^= ((sh).h ^ t_.h) & m_;                                         \
	} while (0)

#define STMTHASH_DEFINE_FLAT(NAME, SIZE)                                                \
	static long NAME##_step(__u32 i, void *arg)                                     \
	{                                                                               \
		struct stmthash_ctx *c = arg;                                           \
		struct stathash sh = c->sh;                                             \
		__u32 row = c->row, base = i * 8;                                       \
		__u64 live = 1;                                                         \
                                                                                        \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 0, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 1, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 2, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 3, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 4, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 5, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 6, SIZE);                    \
		STMTHASH_FLAT_STEP(c, sh, row, live, base, 7, SIZE);                    \
		c->sh = sh;                                                             \
		c->row = row;                                                           \
		return 1 - live;                                                        \
	}                                                                               \
	static __always_inline __u64 NAME(const char *buf)                              \
	{                                                                               \
		struct stmthash_ctx c = { .text = buf, .row = STATHASH_DFA_START };     \
                                                                                        \
		stathash_init(&c.sh);                                                   \
		bpf_loop((SIZE) / 8, NAME##_step, &c, 0);                               \
		return stathash_final(&c.sh);                                           \
	}

#endif
