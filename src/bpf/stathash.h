/* The literal-blind statement hash of stat.bpf.c and latency.bpf.c, the same code in user space. */
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

/* 0 is kept for "no statement": a hash that lands there becomes 1. */
STATHASH_INLINE __u64 stathash_final(const struct stathash *c)
{
	return c->h ? c->h : 1;
}

#endif
