/* The literal-blind statement hash of the BPF programs (stmthash.bpf.h), the same code in user space. */
#ifndef DBTAP_BPF_STATHASH_H
#define DBTAP_BPF_STATHASH_H

#ifndef __bpf__
#include <linux/types.h>
#include <stdbool.h>
#define STATHASH_INLINE static inline __attribute__((always_inline))
#else
#define STATHASH_INLINE static __always_inline
#endif

/*
 * Numbers and '...' strings hash as one literal mark, so the kernel keeps one entry per
 * statement shape, not one per literal. User space then applies PostgreSQL's
 * normalization (pg/normalize.c) to a sample text and merges what it makes equal; for
 * that to be right the hash must never merge two statements the normalization keeps
 * apart. The contract, checked by tests/fuzz/fuzz_normalize.c: two texts that differ
 * only in bytes this hash skips (digits after a number's first, the inside of a
 * '...' string) normalize to the same text. So the hash skips nothing the normalizer
 * looks at:
 * - digits in identifiers, $n parameters, quoted identifiers and comments are hashed
 *   as they are; so is a '.' in a number ("1.2.3" is two literals, "1..2" two others);
 * - from a backslash on (an E'..' escape, or any '..' string with
 *   standard_conforming_strings off), from a '$' that may open a dollar-quoted string,
 *   and from a comment nested in a comment, every byte is hashed as it is: where such
 *   a token ends depends on what the kernel cannot see here (a session setting, a tag
 *   to match, a nesting depth the verifier would have to follow).
 * Marks are values above 255, so no text byte can stand for one. The state is one
 * small number: the verifier checks the step for each of its values.
 */
enum {
	SH_CODE, SH_IDENT, SH_NUM, SH_STR, SH_QIDENT, SH_LINECOMMENT, SH_BLOCKCOMMENT, SH_DOLLAR,
	SH_PARAM, SH_RAW
};

#define STATHASH_SEED 0xcbf29ce484222325ull
#define STATHASH_MARK_LITERAL 0x100
/* in prev: the last byte ended a two-byte comment token, so it starts no other one */
#define STATHASH_PREV_NONE ' '

struct stathash {
	__u64 h;
	__u32 state;
	char prev;
};

STATHASH_INLINE void stathash_init(struct stathash *c)
{
	c->h = STATHASH_SEED;
	c->state = SH_CODE;
	c->prev = STATHASH_PREV_NONE;
}

STATHASH_INLINE bool stathash_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

STATHASH_INLINE void stathash_mix_value(struct stathash *c, __u32 v)
{
	c->h ^= v;
	c->h *= 0x100000001b3ull; /* FNV-1a */
}

STATHASH_INLINE void stathash_mix(struct stathash *c, char ch)
{
	stathash_mix_value(c, (unsigned char)ch);
}

/* Feeds one byte (not the terminating NUL). */
STATHASH_INLINE void stathash_byte(struct stathash *c, char ch)
{
	char prev = c->prev;
	bool digit = ch >= '0' && ch <= '9', ident;

	c->prev = ch;
	switch (c->state) {
	case SH_RAW:
		stathash_mix(c, ch);
		return;
	case SH_NUM:
		if (digit)
			return;
		c->state = SH_CODE; /* what ends a number starts the next token */
		break;
	case SH_PARAM:
		if (digit) { /* $n's digits, as written */
			stathash_mix(c, ch);
			return;
		}
		c->state = SH_CODE;
		break;
	case SH_STR:
		if (ch == '\\') {
			c->state = SH_RAW;
			stathash_mix(c, ch);
		} else if (ch == '\'') {
			c->state = SH_CODE;
		}
		return;
	case SH_QIDENT:
		if (ch == '"')
			c->state = SH_CODE;
		stathash_mix(c, ch);
		return;
	case SH_LINECOMMENT:
		if (ch == '\n')
			c->state = SH_CODE;
		stathash_mix(c, ch);
		return;
	case SH_BLOCKCOMMENT:
		if (ch == '*' && prev == '/') {
			c->state = SH_RAW; /* nested */
		} else if (ch == '/' && prev == '*') {
			c->state = SH_CODE;
			c->prev = STATHASH_PREV_NONE;
		}
		stathash_mix(c, ch);
		return;
	case SH_DOLLAR:
		/* "$1": a parameter; anything else may open $tag$...$tag$ */
		c->state = digit ? SH_PARAM : SH_RAW;
		stathash_mix(c, ch);
		return;
	}
	/* between tokens, or inside an identifier (SH_IDENT) */
	ident = c->state == SH_IDENT;
	if (digit && !ident) {
		c->state = SH_NUM;
		stathash_mix_value(c, STATHASH_MARK_LITERAL);
		return;
	}
	if (ch == '\'') {
		c->state = SH_STR;
		stathash_mix_value(c, STATHASH_MARK_LITERAL);
		return;
	}
	stathash_mix(c, ch);
	if (ch == '"') {
		c->state = SH_QIDENT;
	} else if (ch == '-' && prev == '-') {
		c->state = SH_LINECOMMENT;
	} else if (ch == '*' && prev == '/') {
		c->state = SH_BLOCKCOMMENT;
		c->prev = STATHASH_PREV_NONE;
	} else if (ch == '\\') {
		c->state = SH_RAW;
	} else if (ch == '$' && !ident) {
		c->state = SH_DOLLAR;
	} else if (stathash_ident_char(ch) && (ident || (!digit && ch != '$'))) {
		/* identifiers start with a letter, '_' or a non-ASCII byte, go on with
		 * those, digits and '$' */
		c->state = SH_IDENT;
	} else {
		c->state = SH_CODE;
	}
}

/*
 * The same hash as a table-driven automaton, which is what runs in the kernel: a loop
 * over the state machine above, a branch per state, costs the verifier seconds (each
 * state and previous-byte combination is a path of its own), a table lookup per byte a
 * few milliseconds. stathash_byte() compares the previous byte with '-', '/' and '*'
 * only, so (state, class of prev) is its whole state: SH_STATES * STATHASH_CLASSES rows
 * of 256 entries, each with the next row and what the byte mixes in (nothing, the
 * literal mark, or the byte). stathash_dfa_fill() builds the table by running
 * stathash_byte() itself, so the two cannot disagree; the unit tests check them equal.
 */
#define SH_STATES (SH_RAW + 1) /* SH_RAW is the last state */
#define STATHASH_CLASSES 4
#define STATHASH_ROWS (SH_STATES * STATHASH_CLASSES)
#define STATHASH_DFA_ENTRIES (STATHASH_ROWS * 256)
#define STATHASH_DFA_START (SH_CODE * STATHASH_CLASSES + 3) /* prev: class "other" */
enum { STATHASH_EMIT_NONE, STATHASH_EMIT_MARK, STATHASH_EMIT_BYTE };

STATHASH_INLINE __u32 stathash_class(char c)
{
	return c == '-' ? 0 : c == '/' ? 1 : c == '*' ? 2 : 3;
}

/* One byte through the table: row is the automaton's state, updated. */
STATHASH_INLINE void stathash_dfa_step(struct stathash *c, __u32 *row, const __u16 *dfa,
				       unsigned char ch)
{
	__u32 idx = *row * 256 + ch;
	__u16 e;

	if (idx >= STATHASH_DFA_ENTRIES)
		return; /* cannot happen: rows come from the table; the verifier's bound */
	e = dfa[idx];
	*row = e & 0xff;
	if (e >> 8 == STATHASH_EMIT_MARK)
		stathash_mix_value(c, STATHASH_MARK_LITERAL);
	else if (e >> 8 == STATHASH_EMIT_BYTE)
		stathash_mix(c, (char)ch);
}

#ifndef __bpf__
/* Fills dfa (STATHASH_DFA_ENTRIES entries) from stathash_byte(). */
static inline void stathash_dfa_fill(__u16 *dfa)
{
	static const char rep[STATHASH_CLASSES] = { '-', '/', '*', STATHASH_PREV_NONE };

	for (__u32 st = 0; st < SH_STATES; st++)
		for (__u32 cl = 0; cl < STATHASH_CLASSES; cl++)
			for (__u32 ch = 0; ch < 256; ch++) {
				struct stathash a = { .h = STATHASH_SEED, .state = st, .prev = rep[cl] };
				struct stathash m = { .h = STATHASH_SEED }, b = { .h = STATHASH_SEED };
				__u16 emit = STATHASH_EMIT_NONE;

				stathash_byte(&a, (char)ch);
				stathash_mix_value(&m, STATHASH_MARK_LITERAL);
				stathash_mix(&b, (char)ch);
				if (a.h == b.h)
					emit = STATHASH_EMIT_BYTE;
				else if (a.h == m.h)
					emit = STATHASH_EMIT_MARK;
				dfa[(st * STATHASH_CLASSES + cl) * 256 + ch] =
					(__u16)(emit << 8 | (a.state * STATHASH_CLASSES +
							     stathash_class(a.prev)));
			}
}
#endif

/* 0 is kept for "no statement": a hash that lands there becomes 1. */
STATHASH_INLINE __u64 stathash_final(const struct stathash *c)
{
	return c->h ? c->h : 1;
}

#ifndef __bpf__
/* The key of a NUL-terminated text a byte at a time: what every faster step is held to. */
STATHASH_INLINE __u64 stathash_text(const char *s)
{
	struct stathash h;

	stathash_init(&h);
	for (; *s; s++)
		stathash_byte(&h, *s);
	return stathash_final(&h);
}
#endif

#endif
