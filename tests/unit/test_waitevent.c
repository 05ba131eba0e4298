/* Unit tests for pg/waitevent.c (names per version) and the wait event layout in pg/layout.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "pg/layout.h"
#include "pg/waitevent.h"

static void check(int major, uint32_t info, const char *type, const char *event, bool known)
{
	struct pg_wait_name n;

	pg_wait_event_name(major, info, &n);
	assert_string_equal(n.type, type);
	assert_string_equal(n.event, event);
	assert_int_equal(n.known, known);
}

/* Ids written out from each release's enums (wait_event.h / pgstat.h / lock.h). */
static void test_names(void **state)
{
	/* LOCKTAG_TRANSACTION is 5 since 13 added LOCKTAG_DATABASE_FROZEN_IDS at 2 */
	check(15, 0x03000005, "Lock", "transactionid", true);
	check(13, 0x03000002, "Lock", "frozenid", true);
	check(18, 0x0300000B, "Lock", "applytransaction", true);
	check(15, 0x0300000B, "Lock", "id 11", false);
	/* WAIT_EVENT_CLIENT_READ is the first Client event everywhere */
	check(13, 0x06000000, "Client", "ClientRead", true);
	check(15, 0x06000000, "Client", "ClientRead", true);
	check(18, 0x06000000, "Client", "ClientRead", true);
	/* 15: BaseBackupThrottle, CheckpointWriteDelay, PgSleep */
	check(15, 0x09000002, "Timeout", "PgSleep", true);
	check(13, 0x09000001, "Timeout", "PgSleep", true);
	/* 17+ camel-cases the sorted names: WAL_WRITE -> WalWrite; 15 spells it WALWrite */
	assert_int_not_equal(pg_wait_event_lookup(18, "IO", "WalWrite"), 0);
	assert_int_not_equal(pg_wait_event_lookup(15, "IO", "WALWrite"), 0);
	assert_int_equal(pg_wait_event_lookup(15, "IO", "WalWrite"), 0);
	/* LWLock: individual locks by number, then the built-in tranches */
	check(15, 0x01000001, "LWLock", "ShmemIndex", true);
	check(15, 0x01000000, "LWLock", "id 0", false); /* unassigned */
	check(15, 0x01000000 | 48, "LWLock", "XactBuffer", true);
	check(15, 0x01000000 | 200, "LWLock", "id 200", false); /* an extension's tranche */
	/* one name for the whole class before 17 */
	check(15, 0x04000000, "BufferPin", "BufferPin", true);
	check(15, 0x07000003, "Extension", "Extension", true);
	check(18, 0x07000003, "Extension", "id 3", false); /* a custom event of 17+ */
	check(18, 0x0B000001, "InjectionPoint", "id 1", false);
	check(15, 0x0C000001, "class 12", "id 1", false);
	/* 18 does not keep its tranche names in enum order: 87 is the member SLRU */
	check(18, 0x01000000 | 87, "LWLock", "MultiXactMemberSLRU", true);
	/* 12 named its locks as registered: the Lock suffix, lower-case tranches */
	check(12, 0x01000008, "LWLock", "WALWriteLock", true);
	check(12, 0x01000000 | 56, "LWLock", "buffer_content", true);
	check(12, 0x09000001, "Timeout", "PgSleep", true);
	/* 16 added applytransaction; 17 camel-cases IO names it sorts */
	check(16, 0x0300000B, "Lock", "applytransaction", true);
	check(17, 0x0A000000, "IO", "BasebackupRead", true);
	for (int v = 12; v <= 18; v++)
		assert_true(pg_wait_names_known(v));
	/* a version without names: numbers, never dropped */
	check(99, 0x09000002, "Timeout", "id 2", false);
	assert_false(pg_wait_names_known(99));
	assert_true(pg_wait_names_known(15));
}

/* Every id of every table maps back to itself through its name. */
static void test_roundtrip(void **state)
{
	for (int v = 0; v < pg_wait_names_count; v++) {
		const struct pg_wait_names *t = &pg_wait_names_table[v];
		for (int c = 0; c < PG_WAIT_CLASSES; c++) {
			for (int i = 0; i < t->cls[c].n; i++) {
				struct pg_wait_name n;
				uint32_t info = (uint32_t)c << 24 | (uint32_t)i;
				if (!t->cls[c].names[i])
					continue;
				pg_wait_event_name(t->major, info, &n);
				assert_true(n.known);
				assert_string_equal(n.event, t->cls[c].names[i]);
				/* the first of equal names wins the lookup: none repeat in a class */
				assert_int_equal(pg_wait_event_lookup(t->major, n.type, n.event), info);
			}
		}
	}
}

static void test_locate(void **state)
{
	struct pg_wait_loc loc;

	assert_int_equal(pg_wait_locate(15, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "my_wait_event_info");
	assert_int_equal(loc.field_off, 0);
	assert_int_equal(pg_wait_locate(13, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "MyProc");
	/* offsetof(PGPROC, wait_event_info) on 13.16's headers */
	assert_int_equal(loc.field_off, 684);
	assert_int_equal(pg_wait_locate(12, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "MyProc");
	assert_int_equal(loc.field_off, 676);
	assert_int_equal(pg_wait_locate(14, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "my_wait_event_info");
	assert_int_equal(pg_wait_locate(11, NULL, &loc), -1);
	assert_int_equal(pg_wait_locate(99, NULL, &loc), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_locate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
