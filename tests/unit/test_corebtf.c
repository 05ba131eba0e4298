/* Unit tests for bpf/corebtf.c: when the built-in minimal BTF may stand for the kernel's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/corebtf.h"
#include "target/knotes.h"

/* "123456789" is CRC-32's standard check input; its CRC is 0xcbf43926. */
static char path[] = "/tmp/dbtap-test-corebtf.XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "123456789", 9) != 9)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

static void test_match(void **state)
{
	assert_true(core_btf_file_matches(path, 9, 0xcbf43926ul));
}

static void test_mismatch(void **state)
{
	assert_false(core_btf_file_matches(path, 9, 0xcbf43927ul)); /* another kernel */
	assert_false(core_btf_file_matches(path, 10, 0xcbf43926ul));
	assert_false(core_btf_file_matches("/nonexistent/vmlinux", 9, 0xcbf43926ul));
}

/* Notes as the kernel lays them out: a "Xen" note, then the GNU build-id, then "Linux". */
static const unsigned char notes_a[] = {
	4, 0, 0, 0, 4, 0, 0, 0, 0x12, 0, 0, 0, 'X', 'e', 'n', 0, 1, 2, 3, 4,
	4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
	0xa3, 0xe4, 0xcd, 0x60, 0xa8, 0xec, 0x14, 0xf0, 0x2a, 0xa4,
	0x1b, 0x41, 0xd5, 0xb5, 0x84, 0x6d, 0x3d, 0x9f, 0x1d, 0xd8,
	6, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 'L', 'i', 'n', 'u', 'x', 0, 0, 0, 9, 0, 0, 0,
};

static void test_build_id(void **state)
{
	const unsigned char *id;
	assert_int_equal(knotes_build_id(notes_a, sizeof(notes_a), &id), 20);
	assert_ptr_equal(id, notes_a + 20 + 12 + 4);
	assert_int_equal(id[0], 0xa3);
	assert_int_equal(id[19], 0xd8);
}

static void test_build_id_malformed(void **state)
{
	unsigned char n[sizeof(notes_a)];
	const unsigned char *id;
	/* cut inside the build-id: its length runs past the end */
	assert_int_equal(knotes_build_id(notes_a, 20 + 12 + 4 + 10, &id), -1);
	/* a name length of 0xffffffff must neither wrap nor read past the end */
	memcpy(n, notes_a, sizeof(n));
	n[0] = n[1] = n[2] = n[3] = 0xff;
	assert_int_equal(knotes_build_id(n, sizeof(n), &id), -1);
	/* a descriptor length near 4 GB after a good name */
	memcpy(n, notes_a, sizeof(n));
	n[4] = n[5] = n[6] = n[7] = 0xff;
	assert_int_equal(knotes_build_id(n, sizeof(n), &id), -1);
	/* no GNU build-id at all: only the Xen note */
	assert_int_equal(knotes_build_id(notes_a, 20, &id), -1);
	assert_int_equal(knotes_build_id(notes_a, 0, &id), -1);
	assert_int_equal(knotes_build_id(notes_a, 11, &id), -1);
	/* type 3 with another owner is not a build-id */
	memcpy(n, notes_a, sizeof(n));
	n[20 + 12] = 'X';
	assert_int_equal(knotes_build_id(n, sizeof(n), &id), -1);
}

static char notes_path[] = "/tmp/dbtap-test-knotes.XXXXXX";

static void write_notes(const unsigned char *b, size_t len)
{
	FILE *f = fopen(notes_path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
}

static void test_kernel_matches(void **state)
{
	struct core_btf_kernel built = { notes_a, sizeof(notes_a), 9, 0xcbf43926ul };
	unsigned char other[sizeof(notes_a)];
	const char *how;
	int fd = mkstemp(notes_path);
	assert_true(fd >= 0);
	close(fd);

	/* same build-id: equal, without the BTF's CRC (a wrong one is never looked at) */
	write_notes(notes_a, sizeof(notes_a));
	built.btf_crc = 0x1234;
	assert_true(core_btf_kernel_matches(&built, notes_path, path, &how));
	assert_string_equal(how, "build-id");
	/* another build-id: differs, even with the BTF's size and CRC32 the same */
	memcpy(other, notes_a, sizeof(other));
	other[36 + 19] ^= 1;
	write_notes(other, sizeof(other));
	built.btf_crc = 0xcbf43926ul;
	assert_false(core_btf_kernel_matches(&built, notes_path, path, &how));
	assert_string_equal(how, "build-id");
	/* another BTF size: differs before any notes are read */
	built.btf_size = 10;
	write_notes(notes_a, sizeof(notes_a));
	assert_false(core_btf_kernel_matches(&built, notes_path, path, &how));
	assert_string_equal(how, "size");
	built.btf_size = 9;
	/* no build-id in the running kernel's notes (or none recorded): the CRC32 decides */
	write_notes(notes_a, 20);
	assert_true(core_btf_kernel_matches(&built, notes_path, path, &how));
	assert_string_equal(how, "CRC32");
	built.btf_crc = 0xcbf43927ul;
	assert_false(core_btf_kernel_matches(&built, notes_path, path, &how));
	built.notes_len = 0;
	built.btf_crc = 0xcbf43926ul;
	write_notes(notes_a, sizeof(notes_a));
	assert_true(core_btf_kernel_matches(&built, notes_path, path, &how));
	assert_string_equal(how, "CRC32");
	assert_true(core_btf_kernel_matches(&built, "/nonexistent/notes", path, &how));
	assert_false(core_btf_kernel_matches(&built, notes_path, "/nonexistent/vmlinux", &how));
	unlink(notes_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_build_id_malformed),
		cmocka_unit_test(test_kernel_matches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
