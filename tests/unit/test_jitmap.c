/* Unit tests for target/jitmap.c, target/addrsyms.c and target/kallsyms.c: JIT maps, jitdump records, lookups. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/addrsyms.h"
#include "target/jitmap.h"
#include "target/kallsyms.h"

static void test_perfmap(void **state)
{
	const char map[] =
		"7f0000001000 40 jit_add\n"
		"0x7f0000002000 0x100 Interpreter: with spaces\r\n"
		"garbage line\n"
		"7f0000003000 0 zero_size\n"
		"7f0000004000 10\n"
		"ffffffffffffffff 10 wraps\n"
		"7f0000001010 8 jit_inner";
	struct addr_syms a;
	int bad = 0;

	addr_syms_init(&a);
	assert_int_equal(perfmap_parse(map, strlen(map), &a, &bad), 3);
	assert_int_equal(bad, 4);
	addr_syms_finish(&a);
	assert_string_equal(addr_syms_lookup(&a, 0x7f0000001000, NULL), "jit_add");
	/* a later definition inside an earlier one wins where they overlap */
	assert_string_equal(addr_syms_lookup(&a, 0x7f0000001012, NULL), "jit_inner");
	assert_string_equal(addr_syms_lookup(&a, 0x7f000000103f, NULL), "jit_add");
	assert_null(addr_syms_lookup(&a, 0x7f0000001040, NULL));
	assert_string_equal(addr_syms_lookup(&a, 0x7f00000020ff, NULL), "Interpreter: with spaces");
	assert_null(addr_syms_lookup(&a, 0x7f0000000fff, NULL));
	addr_syms_free(&a);

	/* a NUL inside a line ends its name; a name of only a NUL is no name */
	const char nul[] = "7f0000005000 10 ab\0cd\n7f0000006000 10 \0x\n";
	addr_syms_init(&a);
	assert_int_equal(perfmap_parse(nul, sizeof(nul) - 1, &a, NULL), 1);
	addr_syms_finish(&a);
	assert_string_equal(addr_syms_lookup(&a, 0x7f0000005001, NULL), "ab");
	addr_syms_free(&a);
}

static size_t put32(unsigned char *b, uint32_t v) { memcpy(b, &v, 4); return 4; }
static size_t put64(unsigned char *b, uint64_t v) { memcpy(b, &v, 8); return 8; }

static size_t code_load(unsigned char *b, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t n = 0, nl = strlen(name) + 1, total = 16 + 40 + nl + size;
	n += put32(b + n, 0);
	n += put32(b + n, (uint32_t)total);
	n += put64(b + n, 1);
	n += put32(b + n, 42);
	n += put32(b + n, 42);
	n += put64(b + n, addr);
	n += put64(b + n, addr);
	n += put64(b + n, size);
	n += put64(b + n, index);
	memcpy(b + n, name, nl);
	n += nl;
	memset(b + n, 0x90, size);
	return n + size;
}

static void test_jitdump(void **state)
{
	unsigned char buf[4096];
	size_t n = 0;
	struct addr_syms a;

	n += put32(buf + n, 0x4A695444);
	n += put32(buf + n, 1);
	n += put32(buf + n, 40);
	n += put32(buf + n, 62);
	n += put32(buf + n, 0);
	n += put32(buf + n, 42);
	n += put64(buf + n, 0);
	n += put64(buf + n, 0);
	n += code_load(buf + n, 0x10000, 32, 1, "evalexpr_0_0");
	/* a move of index 1 to 0x20000 */
	n += put32(buf + n, 1);
	n += put32(buf + n, 16 + 48);
	n += put64(buf + n, 2);
	n += put32(buf + n, 42);
	n += put32(buf + n, 42);
	n += put64(buf + n, 0x10000);
	n += put64(buf + n, 0x10000);
	n += put64(buf + n, 0x20000);
	n += put64(buf + n, 32);
	n += put64(buf + n, 1);
	size_t cut = n;
	n += code_load(buf + n, 0x30000, 16, 2, "deform_0_1");

	addr_syms_init(&a);
	assert_int_equal(jitdump_parse(buf, n, &a), 3);
	addr_syms_finish(&a);
	assert_string_equal(addr_syms_lookup(&a, 0x10010, NULL), "evalexpr_0_0");
	assert_string_equal(addr_syms_lookup(&a, 0x2001f, NULL), "evalexpr_0_0");
	assert_string_equal(addr_syms_lookup(&a, 0x30000, NULL), "deform_0_1");
	addr_syms_free(&a);

	/* a record cut short ends the parse; what came before stays */
	addr_syms_init(&a);
	assert_int_equal(jitdump_parse(buf, cut + 20, &a), 2);
	addr_syms_free(&a);
	/* not a jitdump */
	addr_syms_init(&a);
	buf[0] = 'X';
	assert_int_equal(jitdump_parse(buf, n, &a), -1);
	assert_int_equal(jitdump_parse(buf, 10, &a), -1);
	addr_syms_free(&a);
}

static void test_kallsyms(void **state)
{
	char path[] = "/tmp/dbtap-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct addr_syms a;

	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000100 t helper\n"
	      "ffffffff81000200 D some_data\n"
	      "ffffffffc0000000 t mod_func\t[mymod]\n", f);
	fclose(f);
	addr_syms_init(&a);
	assert_int_equal(kallsyms_load(&a, path), 3);
	assert_string_equal(addr_syms_lookup(&a, 0xffffffff81000050, NULL), "_stext");
	assert_string_equal(addr_syms_lookup(&a, 0xffffffff81000250, NULL), "helper");
	assert_string_equal(addr_syms_lookup(&a, 0xffffffffc0000010, NULL), "mod_func");
	assert_null(addr_syms_lookup(&a, 0xffffffff80000000, NULL));
	addr_syms_free(&a);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfmap),
		cmocka_unit_test(test_jitdump),
		cmocka_unit_test(test_kallsyms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
