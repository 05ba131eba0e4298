/* Unit tests for dbtap bench: the sites' first instructions and USDT notes, medians, rows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/run.h"
#include "bench/workload.h"
#include "target/elf.h"
#include "target/usdt.h"

/* This test binary links sites.S like dbtap does: its own file is the probed binary. */
static struct elf_file *self(void)
{
	struct elf_file *ef = elf_file_open("/proc/self/exe");
	assert_non_null(ef);
	return ef;
}

static void expect_code(struct elf_file *ef, enum bench_site site, const uint8_t *want, size_t n)
{
	struct elf_sym sym;
	uint8_t got[16];

	assert_int_equal(elf_file_find_sym(ef, bench_site_symbol(site), &sym), 0);
	assert_int_equal(elf_file_read_vaddr(ef, sym.value, got, n), 0);
	assert_memory_equal(got, want, n);
}

/* The x86-64 encodings the mechanisms are named after. */
static void test_first_instructions(void **state)
{
	static const uint8_t nop[] = { 0x90, 0xc3 };
	static const uint8_t push[] = { 0x55 };
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3 };
	static const uint8_t store[] = { 0x48, 0x89, 0x3d };  /* mov %rdi,disp32(%rip) */
	static const uint8_t sema[] = { 0x66, 0x83, 0x3d };   /* cmpw $imm8,disp32(%rip) */
	static const uint8_t sys[] = { 0xb8, 121, 0, 0, 0 };  /* mov $__NR_getpgid,%eax */
	struct elf_file *ef = self();

	expect_code(ef, SITE_NOP, nop, sizeof(nop));
	expect_code(ef, SITE_PUSH, push, sizeof(push));
	expect_code(ef, SITE_NOP5, nop5, sizeof(nop5));
	expect_code(ef, SITE_STORE, store, sizeof(store));
	expect_code(ef, SITE_USDT, nop, sizeof(nop));
	expect_code(ef, SITE_USDT_SEMA, sema, sizeof(sema));
	expect_code(ef, SITE_SYSCALL, sys, sizeof(sys));
	elf_file_close(ef);
}

/* The hand-written notes say what <sys/sdt.h> would: the nop's address, the semaphore. */
static void test_usdt_notes(void **state)
{
	struct elf_file *ef = self();
	struct usdt_list list;
	struct elf_sym fn, sema_fn, sema;

	assert_int_equal(usdt_list_read("/proc/self/exe", &list), 0);
	const struct usdt_note *site = usdt_list_find(&list, BENCH_USDT_PROVIDER, "site");
	const struct usdt_note *guarded = usdt_list_find(&list, BENCH_USDT_PROVIDER, "sema_site");
	assert_non_null(site);
	assert_non_null(guarded);
	assert_int_equal(elf_file_find_sym(ef, "bench_fn_usdt", &fn), 0);
	assert_int_equal(elf_file_find_sym(ef, "bench_fn_usdt_sema", &sema_fn), 0);
	assert_int_equal(elf_file_find_sym(ef, "dbtap_bench_sema_site_semaphore", &sema), 0);
	assert_int_equal(site->pc, fn.value);
	assert_int_equal(site->semaphore, 0);
	/* cmpw (8 bytes), je (2 bytes), then the site's nop */
	assert_int_equal(guarded->pc, sema_fn.value + 10);
	assert_int_equal(guarded->semaphore, sema.value);
	assert_string_equal(site->args, "");
	usdt_list_free(&list);
	elf_file_close(ef);
}

static void test_watched_aligned(void **state)
{
	/* A hardware breakpoint of length 8 needs an 8-aligned address. */
	assert_int_equal(bench_watched_addr() % 8, 0);
	assert_string_equal(bench_site_usdt(SITE_USDT), "site");
	assert_null(bench_site_usdt(SITE_NOP));
}

static void test_mechanisms(void **state)
{
	for (int i = 0; i < bench_nmechs; i++) {
		assert_ptr_equal(bench_mech_find(bench_mechs[i].name), &bench_mechs[i]);
		if (bench_mechs[i].attach == ATTACH_USDT)
			assert_non_null(bench_site_usdt(bench_mechs[i].site));
	}
	/* The baseline comes first: every other figure is given over it. */
	assert_string_equal(bench_mechs[0].name, "baseline");
	assert_int_equal(bench_mechs[0].attach, ATTACH_NONE);
	assert_null(bench_mech_find("uprobe"));
	assert_null(bench_mech_find(""));
}

static void test_median(void **state)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 }, c[] = { 7 };

	assert_true(bench_median(a, 3) == 3);
	assert_true(bench_median(b, 4) == 2.5);
	assert_true(bench_median(c, 1) == 7);
	assert_true(isnan(bench_median(c, 0)));
}

static void test_row_finish(void **state)
{
	struct bench_sample s[3] = {
		{ .iterations = 100, .count = 100, .counted = true, .rate = 10, .ns = 110 },
		{ .iterations = 200, .count = 200, .counted = true, .rate = 30, .ns = 90 },
		{ .iterations = 300, .count = 300, .counted = true, .rate = 20, .ns = 100 },
	};
	struct bench_row r = { .mech = &bench_mechs[0], .available = true, .n = 3, .samples = s };

	bench_row_finish(&r);
	assert_int_equal(r.iterations, 600);
	assert_int_equal(r.count, 600);
	assert_true(r.counted && r.verified);
	assert_true(r.ns_median == 100);
	assert_true(r.rate_median == 20);
	assert_true(fabs(r.ns_spread_pct - 20.0) < 1e-9);

	/* One hit missed in one run: the sums differ, the row is not verified. */
	s[1].count = 199;
	bench_row_finish(&r);
	assert_true(r.counted && !r.verified);

	/* The statistics run: the program ran once per call, or the row is not verified. */
	r.stats = (struct bench_sample){ .iterations = 50, .prog_stats = true, .prog_runs = 50 };
	bench_row_finish(&r);
	assert_true(r.stats_verified);
	r.stats.prog_runs = 49;
	bench_row_finish(&r);
	assert_false(r.stats_verified);

	/* A run that counted nothing (an empty program): no count at all, not a match. */
	s[1].count = 200;
	s[2].counted = false;
	bench_row_finish(&r);
	assert_false(r.counted);
	assert_false(r.verified);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_instructions),
		cmocka_unit_test(test_usdt_notes),
		cmocka_unit_test(test_watched_aligned),
		cmocka_unit_test(test_mechanisms),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_row_finish),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
