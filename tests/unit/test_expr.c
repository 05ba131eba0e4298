/* Unit tests for target/expr.c (parse, alignment, resolve in this process) and pg/layout.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pg/layout.h"
#include "target/elf.h"
#include "target/expr.h"
#include "util/error.h"

/* Globals this test resolves in its own process, with its own DWARF. */
struct expr_test_struct {
	int a;
	long b;        /* offset 8 */
	short c;       /* offset 16 */
};
struct expr_test_struct expr_test_s = { 1, 2, 3 };
struct expr_test_struct *expr_test_ptr = &expr_test_s;
struct expr_test_struct *expr_test_null;
long expr_test_long;

/*
 * A stand-in for a future server whose layout the table does not know: the debug info
 * of this binary must then give the offsets (nextXid moved to 16 to tell them apart).
 */
struct FutureTransamVariablesData {
	unsigned int nextOid;
	unsigned int oidCount;
	unsigned long moved;
	unsigned long nextXid;
};
struct FutureTransamVariablesData future_transam;
struct FutureTransamVariablesData *TransamVariables = &future_transam;
char expr_test_bytes[24];

static void test_parse_forms(void **state)
{
	struct watch_expr e;

	assert_int_equal(watch_expr_parse("nextXid", &e), 0);
	assert_string_equal(e.symbol, "nextXid");
	assert_false(e.deref);
	assert_int_equal(e.len, 0);
	assert_int_equal(e.mode, WATCH_DEFAULT);

	assert_int_equal(watch_expr_parse("sym+16:4", &e), 0);
	assert_string_equal(e.symbol, "sym");
	assert_int_equal(e.offset, 16);
	assert_int_equal(e.len, 4);

	assert_int_equal(watch_expr_parse("sym+0x10:rw:2", &e), 0);
	assert_int_equal(e.offset, 16);
	assert_int_equal(e.len, 2);
	assert_int_equal(e.mode, WATCH_RW);

	assert_int_equal(watch_expr_parse("ShmemVariableCache->nextXid", &e), 0);
	assert_true(e.deref);
	assert_string_equal(e.field, "nextXid");

	assert_int_equal(watch_expr_parse("ShmemVariableCache->8:8", &e), 0);
	assert_true(e.deref);
	assert_string_equal(e.field, "");
	assert_int_equal(e.field_off, 8);
	assert_int_equal(e.len, 8);

	assert_int_equal(watch_expr_parse("p->f+4:4:w", &e), 0);
	assert_string_equal(e.field, "f");
	assert_int_equal(e.offset, 4);
	assert_int_equal(e.mode, WATCH_W);

	assert_int_equal(watch_expr_parse("0x7fff0010:8", &e), 0);
	assert_string_equal(e.symbol, "");
	assert_int_equal(e.addr, 0x7fff0010);

	assert_int_equal(watch_expr_parse("0xABC+8", &e), 0);
	assert_int_equal(e.addr, 0xabc);
	assert_int_equal(e.offset, 8);

	assert_int_equal(watch_expr_parse("func.isra.0:x", &e), 0);
	assert_string_equal(e.symbol, "func.isra.0");
	assert_int_equal(e.mode, WATCH_X);
}

/* Offsets are decimal or 0x, as the docs say: a leading 0 is not octal. */
static void test_parse_radix(void **state)
{
	struct watch_expr e;
	struct watch_loc loc;

	assert_int_equal(watch_expr_parse("p->010:8", &e), 0);
	assert_int_equal(e.field_off, 10);
	assert_int_equal(watch_expr_parse("sym+010", &e), 0);
	assert_int_equal(e.offset, 10);
	assert_int_equal(watch_expr_parse("p->0x10+0X8", &e), 0);
	assert_int_equal(e.field_off, 16);
	assert_int_equal(e.offset, 8);
	assert_int_equal(watch_expr_parse("sym+0x7fffffffffff", &e), 0);
	/* an address and an offset each in range, their sum past the end: refused */
	assert_int_equal(watch_expr_parse("0x7ffffffffff0+0x100:8", &e), 0);
	assert_int_equal(watch_expr_resolve(&e, getpid(), NULL, &loc), EXIT_USAGE);
}

static void test_parse_errors(void **state)
{
	struct watch_expr e;
	const char *bad[] = {
		"", ":8", "sym:3", "sym:16", "sym:0", "sym:8:4", "sym:w:rw", "sym:r", "sym:q",
		"123", "0x", "0xZZ", "sym+", "sym+x", "sym->", "sym->+8", "sym junk", "sym-8",
		"sym:1:2:3", "fn:x:4", "sym::8", "-sym",
		/* offsets that would wrap around: a negative number written unsigned */
		"ShmemVariableCache->18446744073709551608:8", "sym+0xfffffffffffffff8",
		"sym+18446744073709551616", "0xffffffffffffffff", "sym+0x800000000000",
		"p->0x", "sym+0xg",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (watch_expr_parse(bad[i], &e) != -1)
			fail_msg("'%s' parsed", bad[i]);
	}
}

static void test_alignment(void **state)
{
	assert_int_equal(watch_check_alignment("t", 0x1000, 8), 0);
	assert_int_equal(watch_check_alignment("t", 0x1004, 4), 0);
	assert_int_equal(watch_check_alignment("t", 0x1003, 1), 0);
	assert_int_equal(watch_check_alignment("t", 0x1004, 8), -1);
	assert_int_equal(watch_check_alignment("t", 0x1001, 2), -1);
	assert_int_equal(watch_check_alignment("t", 0x1000, 3), -1);
}

static struct elf_file *self_elf(void)
{
	struct elf_file *ef = elf_file_open("/proc/self/exe");
	if (!ef) {
		char path[4096];
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		assert_true(n > 0);
		path[n] = '\0';
		ef = elf_file_open(path);
	}
	assert_non_null(ef);
	return ef;
}

static int resolve(struct elf_file *ef, const char *text, struct watch_loc *loc)
{
	struct watch_expr e;
	assert_int_equal(watch_expr_parse(text, &e), 0);
	return watch_expr_resolve(&e, getpid(), ef, loc);
}

static void test_resolve_self(void **state)
{
	struct elf_file *ef = self_elf();
	struct watch_loc loc;
	char text[64];

	assert_int_equal(resolve(ef, "expr_test_long", &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_long);
	assert_int_equal(loc.len, 8); /* the symbol's size */
	assert_int_equal(loc.mode, WATCH_W);

	assert_int_equal(resolve(ef, "expr_test_s+8:8", &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_s.b);

	/* +OFFSET into a bigger object: the length must be given */
	assert_int_equal(resolve(ef, "expr_test_bytes+8", &loc), EXIT_USAGE);
	assert_int_equal(resolve(ef, "expr_test_bytes+9:1", &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_bytes[9]);
	assert_int_equal(resolve(ef, "expr_test_bytes+9:2", &loc), EXIT_USAGE); /* unaligned */

	assert_int_equal(resolve(ef, "expr_test_ptr->16:2", &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_s.c);
	assert_int_equal(loc.pointer, (uintptr_t)&expr_test_s);
	assert_int_equal(loc.len, 2);

	/* DWARF field: offset and length from the debug info of this very binary (-g) */
	assert_true(elf_file_has_dwarf(ef));
	assert_int_equal(resolve(ef, "expr_test_ptr->b", &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_s.b);
	assert_int_equal(loc.len, 8);
	assert_int_equal(resolve(ef, "expr_test_ptr->c", &loc), 0);
	assert_int_equal(loc.len, 2);
	assert_int_equal(resolve(ef, "expr_test_ptr->nosuch", &loc), EXIT_USAGE);

	assert_int_equal(resolve(ef, "expr_test_null->8:8", &loc), EXIT_FAIL);
	assert_int_equal(resolve(ef, "expr_test_long->0:8", &loc), EXIT_FAIL); /* 0 is NULL */
	assert_int_equal(resolve(ef, "expr_test_bytes->0:8", &loc), EXIT_USAGE); /* not a pointer */
	assert_int_equal(resolve(ef, "expr_test_lnog", &loc), EXIT_USAGE);

	snprintf(text, sizeof(text), "0x%lx:8", (unsigned long)(uintptr_t)&expr_test_long);
	assert_int_equal(resolve(ef, text, &loc), 0);
	assert_int_equal(loc.addr, (uintptr_t)&expr_test_long);
	assert_int_equal(resolve(ef, "0x10:8", &loc), EXIT_FAIL); /* not mapped */

	elf_file_close(ef);
}

static void test_layout_table(void **state)
{
	const struct pg_layout *l;
	struct pg_counter_loc loc;

	for (int v = 12; v <= 18; v++)
		assert_non_null(pg_layout_find(v));
	assert_null(pg_layout_find(11));
	assert_null(pg_layout_find(19));

	l = pg_layout_find(13);
	assert_string_equal(l->symbol, "ShmemVariableCache");
	assert_string_equal(l->xid_field, "nextFullXid");
	l = pg_layout_find(16);
	assert_string_equal(l->xid_field, "nextXid");
	assert_int_equal(l->struct_size, 72);
	l = pg_layout_find(17);
	assert_string_equal(l->symbol, "TransamVariables");

	assert_int_equal(pg_counter_locate(PG_COUNTER_XID, 15, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "ShmemVariableCache");
	assert_int_equal(loc.offset, 8);
	assert_int_equal(loc.size, 8);
	assert_int_equal(pg_counter_locate(PG_COUNTER_OID, 18, NULL, &loc), 0);
	assert_string_equal(loc.symbol, "TransamVariables");
	assert_int_equal(loc.offset, 0);
	assert_int_equal(loc.size, 4);
	/* an unknown version without DWARF is refused */
	assert_int_equal(pg_counter_locate(PG_COUNTER_XID, 19, NULL, &loc), -1);

	/* with DWARF, the binary's own layout wins, for unknown versions too */
	struct elf_file *ef = self_elf();
	assert_int_equal(pg_counter_locate(PG_COUNTER_XID, 19, ef, &loc), 0);
	assert_string_equal(loc.symbol, "TransamVariables");
	assert_string_equal(loc.field, "nextXid");
	assert_int_equal(loc.offset, 16);
	assert_int_equal(loc.size, 8);
	assert_true(loc.from_dwarf);
	assert_int_equal(pg_counter_locate(PG_COUNTER_OID, 19, ef, &loc), 0);
	assert_int_equal(loc.offset, 0);
	assert_int_equal(loc.size, 4);
	elf_file_close(ef);

	assert_int_equal(pg_counter_parse("xid"), PG_COUNTER_XID);
	assert_int_equal(pg_counter_parse("oid"), PG_COUNTER_OID);
	assert_int_equal(pg_counter_parse("nextXid"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_radix),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_resolve_self),
		cmocka_unit_test(test_layout_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
