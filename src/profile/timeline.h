/*
 * What the timeline and the recorder keep of a run: every sample with its time and
 * thread, and PostgreSQL's markers paired into spans, in rings of fixed size
 * allocated at the start (a recorder's memory does not grow). Spans of each kind
 * have a ring of their own, so a flood of statements pushes out old statements,
 * never the transactions, checkpoints or samples.
 */
#ifndef DBTAP_PROFILE_TIMELINE_H
#define DBTAP_PROFILE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/pgmark.h"
#include "bpf/profile.h"
#include "bpf/waitspan.h"
#include "profile/engine.h"
#include "report/timeline.h"

struct tl_sample {
	uint64_t t_ns; /* CLOCK_MONOTONIC */
	uint32_t pid, tid;
	uint64_t ustack, kstack;
};

struct tl_span {
	uint64_t t0_ns, t1_ns;
	uint32_t pid, tid;
	uint8_t kind;  /* enum tl_mark_kind */
	uint8_t flags; /* TL_ABORTED */
	uint16_t pad;
	uint32_t text; /* statements: slot in the text table, UINT32_MAX none; waits: the wait's name slot */
};

/* A fixed array used as a ring: when full, the oldest entry gives way. */
struct tl_ring {
	char *v;
	size_t esz, cap, head, n; /* head: the oldest entry */
	uint64_t dropped;         /* entries pushed out (or refused when cap is 0) */
	uint64_t pushed;          /* entries ever pushed: the oldest kept is number pushed - n */
};

#define TL_TEXT_LEN 256
#define TL_OPEN_SLOTS 4096

/* A thread's transaction and statement in progress. */
struct tl_open {
	uint32_t tid, pid;
	uint64_t txn_t0, stmt_t0; /* 0: none */
	uint32_t text;
	uint64_t wait_seq;        /* the thread's last wait span: its number in the ring + 1, 0 none */
};

/* Wait event names, by wait_event_info: few distinct ones in any run. */
#define TL_WAIT_NAMES 256
struct tl_wait_name {
	uint32_t event;
	char name[100]; /* "Lock:transactionid" */
};

struct timeline {
	struct tl_ring samples;
	struct tl_ring spans[TL_MARK_KINDS];
	char *texts;               /* ntexts slots of TL_TEXT_LEN */
	uint32_t ntexts, used_texts;
	struct u64map text_idx;    /* hash of a text -> slot */
	uint64_t texts_lost;       /* statements whose text found no slot */
	struct tl_open *open;      /* TL_OPEN_SLOTS, by tid */
	uint64_t open_lost;        /* spans whose start was overwritten by another thread's */
	uint64_t marks_seen, samples_seen, waits_seen;
	int pg_major;              /* names the waits; set by the command */
	struct tl_wait_name *wait_names; /* TL_WAIT_NAMES */
	uint32_t nwait_names;
	struct tl_span *open_waits; /* waits in progress, as last given; TL_OPEN_SLOTS at most */
	size_t nopen_waits;
	size_t bytes;              /* what the rings and tables hold, allocated at init */
};

/*
 * Allocates rings that fit in max_bytes: sample_share of it for samples, the rest
 * split between statements (3/8), transactions (3/8), waits (1/8), texts and
 * checkpoints. 0 or -1.
 */
int timeline_init(struct timeline *tl, size_t max_bytes, double sample_share);
void timeline_free(struct timeline *tl);
void timeline_add_sample(struct timeline *tl, const struct profile_rec *r);
/*
 * A pgmark record: starts are held per thread, ends make spans; a PGMARK_TXN_SPAN or
 * PGMARK_STMT_SPAN record (a struct pgmark_span_rec) is a whole span.
 */
void timeline_add_mark(struct timeline *tl, const struct pgmark_rec *r, const char *text);
/*
 * A wait span (bpf/waitspan.h). One that continues the thread's wait before it (the
 * server resumed the same wait: a lock wait woken for its deadlock check) extends it.
 */
void timeline_add_wait(struct timeline *tl, const struct waitspan_rec *r);
/* Forgets the waits in progress given before; adds one (for the next build). */
void timeline_clear_open_waits(struct timeline *tl);
void timeline_add_open_wait(struct timeline *tl, const struct waitspan_rec *r);
/* Forgets what is older than t_ns (the recorder's --keep). */
void timeline_expire(struct timeline *tl, uint64_t t_ns);

/*
 * The stack hashes the kept samples refer to (user into *u, kernel into *k, n of each,
 * malloc'd): what must survive a rotation of the kernel's stack maps. 0 or -1.
 */
int timeline_stack_hashes(const struct timeline *tl, uint64_t **u, uint64_t **k, size_t *n);

struct tl_build {
	uint64_t t0_ns, t1_ns;   /* the window */
	uint64_t start_ns;       /* time 0 of the model's seconds */
	double hz;
	enum prof_by by;         /* row labels: PROF_BY_PID for a cluster, else PROF_BY_THREAD */
	const char *title, *subtitle;
	size_t max_stmts;        /* statement spans in the model at most (0: all); the rest are counted lost */
};

/*
 * The model of one window: a row per thread with samples or spans in it, stacks
 * named through the engine, spans still open at t1 drawn up to t1. 0 or -1.
 */
int timeline_build(struct timeline *tl, struct prof_engine *e, const struct tl_build *b,
		   struct tl_model *m, struct prof_stats *st);

#endif
