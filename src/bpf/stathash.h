/* The literal-blind statement hash of stat.bpf.c, shared with user space for unit tests. */
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
 * Numbers and '...' strings hash as '?', so the kernel keeps one entry per statement
 * shape, not one per literal. User space then applies PostgreSQL's normalization to a
 * sample text and merges what it makes equal; for that to be right the hash must never
 * merge two statements the normalization keeps apart: digits inside identifiers,
 * quoted identifiers and comments are hashed as they are.
 */
enum { SH_CODE, SH_NUM, SH_STR, SH_QIDENT, SH_LINECOMMENT, SH_BLOCKCOMMENT };

#define STATHASH_SEED 0xcbf29ce484222325ull

struct stathash {
	__u64 h;
	__u32 state;
	char prev;
};

STATHASH_INLINE void stathash_init(struct stathash *c)
{
	c->h = STATHASH_SEED;
	c->state = SH_CODE;
	c->prev = ' ';
}

STATHASH_INLINE bool stathash_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

STATHASH_INLINE void stathash_mix(struct stathash *c, char ch)
{
	c->h ^= (unsigned char)ch;
	c->h *= 0x100000001b3ull; /* FNV-1a */
}

/* Feeds one byte (not the terminating NUL). */
STATHASH_INLINE void stathash_byte(struct stathash *c, char ch)
{
	char prev = c->prev;

	c->prev = ch;
	switch (c->state) {
	case SH_NUM:
		if ((ch >= '0' && ch <= '9') || ch == '.')
			return;
		c->state = SH_CODE;
		break;
	case SH_STR:
		if (ch == '\'')
			c->state = SH_CODE;
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
		if (ch == '/' && prev == '*')
			c->state = SH_CODE;
		stathash_mix(c, ch);
		return;
	}
	if (ch >= '0' && ch <= '9' && !stathash_ident_char(prev)) {
		c->state = SH_NUM;
		stathash_mix(c, '?');
	} else if (ch == '\'') {
		c->state = SH_STR;
		stathash_mix(c, '?');
	} else {
		if (ch == '"')
			c->state = SH_QIDENT;
		else if (ch == '-' && prev == '-')
			c->state = SH_LINECOMMENT;
		else if (ch == '*' && prev == '/')
			c->state = SH_BLOCKCOMMENT;
		stathash_mix(c, ch);
	}
}

/* 0 is kept for "no statement": a hash that lands there becomes 1. */
STATHASH_INLINE __u64 stathash_final(const struct stathash *c)
{
	return c->h ? c->h : 1;
}

#endif
