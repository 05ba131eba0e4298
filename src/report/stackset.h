/* A set of stacks with counts (frame names interned, identical stacks merged): what folded files and flame graphs are made from. */
#ifndef DBTAP_REPORT_STACKSET_H
#define DBTAP_REPORT_STACKSET_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashtab.h"

/* What a frame is, for colours and for readers of the set. */
enum stack_kind {
	STACK_GROUP,   /* the root: a process, backend type, thread, wait event... */
	STACK_USER,
	STACK_KERNEL,
	STACK_JIT,
	STACK_UNNAMED, /* "[module+0xoff]" */
	STACK_MARK,    /* "[truncated]" and other notes inside a stack */
	STACK_KINDS,
};

struct stack_ent {
	uint32_t off, n;  /* frames[off .. off+n), root first */
	uint64_t count;
};

struct stack_set {
	struct strpool names; /* frame name ids */
	uint8_t *kinds;       /* by name id: the kind it was first added with */
	size_t kinds_cap;
	uint32_t *frames;
	size_t nframes, frames_cap;
	struct stack_ent *v;
	size_t n, cap;
	struct u64map idx;    /* stack hash -> entry (probing on a mismatch) */
	uint64_t total;       /* sum of counts */
	size_t last;          /* the entry the latest stack_set_add() went to */
};

void stack_set_init(struct stack_set *ss);
void stack_set_free(struct stack_set *ss);
/*
 * The id of a frame name, added when new. Names are made safe for every writer:
 * bytes that are not printable UTF-8 become '?', and ';' (the folded format's
 * separator) becomes ':'. UINT32_MAX when out of memory.
 */
uint32_t stack_set_frame(struct stack_set *ss, const char *name, enum stack_kind kind);
static inline const char *stack_set_name(const struct stack_set *ss, uint32_t id)
{
	return strpool_str(&ss->names, id);
}
/* Adds count to the stack frames[0..n) (root first); merges with an equal one. 0 or -1. */
int stack_set_add(struct stack_set *ss, const uint32_t *frames, int n, uint64_t count);

#endif
