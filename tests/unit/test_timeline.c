/* Unit tests for profile/timeline.c: wait spans kept in their ring, resumed waits joined; whole marker spans. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "profile/timeline.h"

#define LOCK_XID 0x03000005u /* Lock:transactionid (LOCKTAG_TRANSACTION is 5) */
#define PG_SLEEP 0x09000002u /* a Timeout event */

static const struct tl_span *wait_at(const struct timeline *tl, size_t i)
{
	const struct tl_ring *r = &tl->spans[TL_WAIT];

	assert_true(i < r->n);
	return (const struct tl_span *)(r->v + ((r->head + i) % r->cap) * r->esz);
}

static void add(struct timeline *tl, uint32_t tid, uint32_t ev, uint64_t t0, uint64_t t1, uint32_t flags)
{
	struct waitspan_rec r = { .pid = 100, .tid = tid, .event = ev, .flags = flags, .t0_ns = t0,
				  .t1_ns = t1 };
	timeline_add_wait(tl, &r);
}

static const struct tl_span *span_at(const struct timeline *tl, enum tl_mark_kind k, size_t i)
{
	const struct tl_ring *r = &tl->spans[k];

	assert_true(i < r->n);
	return (const struct tl_span *)(r->v + ((r->head + i) % r->cap) * r->esz);
}

/*
 * Spans read whole at a switch-out: kept as they come, a thread's transaction in
 * progress from the probes untouched by them, the text normalized.
 */
static void test_whole_spans(void **state)
{
	struct timeline tl;
	struct pgmark_span_rec st = { .h = { .kind = PGMARK_STMT_SPAN, .pid = 100, .tid = 7,
					     .time_ns = 5000 }, .t0_ns = 3000 };
	struct pgmark_span_rec tx = { .h = { .kind = PGMARK_TXN_SPAN, .pid = 100, .tid = 7,
					     .time_ns = 5000 }, .t0_ns = 2000,
				      .flags = PGMARK_ABORTED };
	struct pgmark_rec start = { .kind = PGMARK_TXN_START, .pid = 100, .tid = 9, .time_ns = 1000 };
	struct pgmark_rec commit = { .kind = PGMARK_TXN_COMMIT, .pid = 100, .tid = 9, .time_ns = 6000 };

	(void)state;
	assert_int_equal(timeline_init(&tl, 1 << 20, 0.25), 0);
	timeline_add_mark(&tl, &start, "");
	timeline_add_mark(&tl, &st.h, "SELECT 42");
	timeline_add_mark(&tl, &tx.h, "");
	timeline_add_mark(&tl, &commit, "");
	assert_int_equal(tl.spans[TL_STMT].n, 1);
	assert_int_equal(span_at(&tl, TL_STMT, 0)->t0_ns, 3000);
	assert_int_equal(span_at(&tl, TL_STMT, 0)->t1_ns, 5000);
	assert_int_equal(span_at(&tl, TL_STMT, 0)->flags, 0);
	assert_string_equal(tl.texts + (size_t)span_at(&tl, TL_STMT, 0)->text * (TL_TEXT_LEN + 1),
			    "SELECT $1");
	assert_int_equal(tl.spans[TL_TXN].n, 2);
	assert_int_equal(span_at(&tl, TL_TXN, 0)->t0_ns, 2000);
	assert_int_equal(span_at(&tl, TL_TXN, 0)->tid, 7);
	assert_int_equal(span_at(&tl, TL_TXN, 0)->flags, TL_ABORTED);
	/* the other thread's transaction from its probes, held while the spans came */
	assert_int_equal(span_at(&tl, TL_TXN, 1)->t0_ns, 1000);
	assert_int_equal(span_at(&tl, TL_TXN, 1)->t1_ns, 6000);
	assert_int_equal(tl.marks_seen, 4);
	timeline_free(&tl);
}

static void test_wait_resumed_joins(void **state)
{
	struct timeline tl;

	(void)state;
	assert_int_equal(timeline_init(&tl, 1 << 20, 0.25), 0);
	tl.pg_major = 15;
	/* a lock wait woken for its deadlock check at 1 s, then waiting on */
	add(&tl, 7, LOCK_XID, 1000, 1001000, 0);
	add(&tl, 7, LOCK_XID, 1001010, 2000000, WAITSPAN_CONT);
	assert_int_equal(tl.spans[TL_WAIT].n, 1);
	assert_int_equal(wait_at(&tl, 0)->t0_ns, 1000);
	assert_int_equal(wait_at(&tl, 0)->t1_ns, 2000000);
	assert_int_equal(tl.waits_seen, 2);
	/* another thread between two waits of this one: they still join */
	add(&tl, 8, PG_SLEEP, 2000100, 2300000, 0);
	add(&tl, 7, LOCK_XID, 2000020, 2500000, WAITSPAN_CONT);
	assert_int_equal(tl.spans[TL_WAIT].n, 2);
	assert_int_equal(wait_at(&tl, 0)->t1_ns, 2500000);
	/* the same event without the flag (the thread left the CPU otherwise between): a new span */
	add(&tl, 7, LOCK_XID, 2600000, 2700000, 0);
	assert_int_equal(tl.spans[TL_WAIT].n, 3);
	/* the flag with another event than the span before: a new span, never a join */
	add(&tl, 7, PG_SLEEP, 2700100, 2800000, WAITSPAN_CONT);
	assert_int_equal(tl.spans[TL_WAIT].n, 4);
	assert_int_equal(wait_at(&tl, 2)->t1_ns, 2700000);
	assert_int_equal(tl.nwait_names, 2);
	assert_string_equal(tl.wait_names[wait_at(&tl, 0)->text].name, "Lock:transactionid");
	timeline_free(&tl);
}

static void test_wait_ring_full(void **state)
{
	struct timeline tl;
	size_t cap;

	(void)state;
	assert_int_equal(timeline_init(&tl, 1 << 20, 0.25), 0);
	tl.pg_major = 15;
	cap = tl.spans[TL_WAIT].cap;
	assert_true(cap > 2);
	add(&tl, 7, LOCK_XID, 10, 20, 0);
	/* other threads' waits push the first one out of the ring */
	for (size_t i = 0; i < cap; i++)
		add(&tl, 8, PG_SLEEP, 100 + 10 * i, 105 + 10 * i, 0);
	assert_int_equal(tl.spans[TL_WAIT].n, cap);
	assert_int_equal(tl.spans[TL_WAIT].dropped, 1);
	/* its continuation has nothing to join: a span of its own, not a write into another's */
	add(&tl, 7, LOCK_XID, 30 + 10 * cap, 40 + 10 * cap, WAITSPAN_CONT);
	const struct tl_span *last = wait_at(&tl, cap - 1);
	assert_int_equal(last->tid, 7);
	assert_int_equal(last->t0_ns, 30 + 10 * cap);
	for (size_t i = 0; i + 1 < cap; i++)
		assert_int_equal(wait_at(&tl, i)->tid, 8);
	/* expired: gone from the ring, and nothing to join either */
	timeline_expire(&tl, UINT64_MAX);
	assert_int_equal(tl.spans[TL_WAIT].n, 0);
	add(&tl, 7, LOCK_XID, 50 + 10 * cap, 60 + 10 * cap, WAITSPAN_CONT);
	assert_int_equal(tl.spans[TL_WAIT].n, 1);
	assert_int_equal(wait_at(&tl, 0)->t0_ns, 50 + 10 * cap);
	timeline_free(&tl);
}

static void test_wait_unknown_event(void **state)
{
	struct timeline tl;

	(void)state;
	assert_int_equal(timeline_init(&tl, 1 << 20, 0.25), 0);
	tl.pg_major = 15;
	/* whatever word the server showed gets a bounded name */
	add(&tl, 7, 0xff00ffffu, 1, 2, 0);
	assert_int_equal(tl.spans[TL_WAIT].n, 1);
	const char *n = tl.wait_names[wait_at(&tl, 0)->text].name;
	assert_true(strlen(n) > 0 && strlen(n) < sizeof(tl.wait_names[0].name));
	assert_non_null(strchr(n, ':'));
	timeline_free(&tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_spans),
		cmocka_unit_test(test_wait_resumed_joins),
		cmocka_unit_test(test_wait_ring_full),
		cmocka_unit_test(test_wait_unknown_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
