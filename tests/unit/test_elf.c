/* Unit tests for target/elf.c and proc_load_bias: symbols of a binary the suite builds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/elf.h"
#include "target/proc.h"

#define WORKLOAD "build/workloads/symbols"

/* What the workload says about itself, measured from the inside. */
struct self_report {
	pid_t pid;
	int to_child; /* its stdin: closing it ends the workload */
	uint64_t bias, global, global_size, function, tie, plt, field_off, field_size;
	char path[4096];
};

static struct self_report rep;

static int start_workload(void **state)
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	if (!realpath(WORKLOAD, rep.path)) {
		fprintf(stderr, "%s is missing: run 'make workloads' first\n", WORKLOAD);
		return -1;
	}
	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	rep.pid = fork();
	if (rep.pid < 0)
		return -1;
	if (rep.pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(rep.path, rep.path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	rep.to_child = in[1];
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		if (sscanf(line, "bias %lx", &a) == 1)
			rep.bias = a;
		else if (sscanf(line, "global %lx %lu", &a, &b) == 2)
			rep.global = a, rep.global_size = b;
		else if (sscanf(line, "function %lx", &a) == 1)
			rep.function = a;
		else if (sscanf(line, "tie %lx", &a) == 1)
			rep.tie = a;
		else if (sscanf(line, "plt %lx", &a) == 1)
			rep.plt = a;
		else if (sscanf(line, "field %lu %lu", &a, &b) == 2)
			rep.field_off = a, rep.field_size = b;
		else if (!strncmp(line, "call ", 5))
			break; /* the last line: the workload now waits on stdin */
	}
	fclose(f);
	return rep.function && rep.global && rep.tie ? 0 : -1;
}

static int stop_workload(void **state)
{
	int st;

	close(rep.to_child);
	waitpid(rep.pid, &st, 0);
	return 0;
}

static void test_find_symbols(void **state)
{
	struct elf_file *ef = elf_file_open(rep.path);
	struct elf_sym s;

	assert_non_null(ef);
	assert_int_equal(elf_file_find_sym(ef, "dbtap_test_global", &s), 0);
	assert_int_equal(s.value, rep.global);
	assert_int_equal(s.size, rep.global_size);
	assert_int_equal(s.type, STT_OBJECT);
	assert_int_equal(s.bind, STB_GLOBAL);

	assert_int_equal(elf_file_find_sym(ef, "dbtap_test_function", &s), 0);
	assert_int_equal(s.value, rep.function);
	assert_int_equal(s.type, STT_FUNC);
	assert_true(s.size > 0);

	/* aliases: the global name with the fewest leading underscores, not the weak one */
	assert_int_equal(elf_file_find_sym(ef, "__dbtap_test_alias", &s), 0);
	assert_int_equal(s.value, rep.function);
	assert_int_equal(elf_file_find_sym(ef, "dbtap_test_function_weak_alias", &s), 0);
	assert_int_equal(s.value, rep.function);
	assert_int_equal(s.bind, STB_WEAK);
	assert_string_equal(elf_file_addr_func(ef, rep.function + 1, NULL), "dbtap_test_function");

	assert_int_equal(elf_file_find_sym(ef, "dbtap_no_such_symbol", &s), -1);
	elf_file_close(ef);
}

/* Index of name in the file's .symtab, read here with libelf alone; -1 if absent. */
static long symtab_index(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	long found = -1;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while ((scn = elf_nextscn(e, scn)) && found < 0) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			if (gelf_getsym(d, i, &sym) && (n = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    !strcmp(n, name)) {
				found = (long)i;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/*
 * Aliases that tie on binding, underscores and length: named by the one first in the
 * symbol table, as perf chooses, whichever comes first in the alphabet.
 */
static void test_alias_tie_table_order(void **state)
{
	struct elf_file *ef = elf_file_open(rep.path);
	long zz = symtab_index(rep.path, "dbtap_tie_zz"), aa = symtab_index(rep.path, "dbtap_tie_aa");

	assert_non_null(ef);
	assert_true(zz >= 0 && aa >= 0 && zz != aa);
	assert_string_equal(elf_file_addr_func(ef, rep.tie + 1, NULL),
			    zz < aa ? "dbtap_tie_zz" : "dbtap_tie_aa");
	elf_file_close(ef);
}

/*
 * A PLT stub is named "read@plt", as perf names it: the stub's address is the one the
 * linker resolved `read@PLT` to in the workload (x86-64), anywhere in its 16 bytes.
 */
static void test_plt_stub(void **state)
{
#if defined(__x86_64__)
	struct elf_file *ef = elf_file_open(rep.path);
	uint64_t start = 0;

	assert_non_null(ef);
	assert_true(rep.plt != 0);
	assert_string_equal(elf_file_addr_func(ef, rep.plt, &start), "read@plt");
	assert_int_equal(start, rep.plt);
	assert_string_equal(elf_file_addr_func(ef, rep.plt + 15, NULL), "read@plt");
	/* the name is for addresses only: a probe on "read@plt" is not a symbol */
	struct elf_sym s;
	assert_int_equal(elf_file_find_sym(ef, "read@plt", &s), -1);
	elf_file_close(ef);
#endif
}

/* The initializer's bytes sit in the file at the offset vaddr_to_offset gives. */
static void test_vaddr_to_offset(void **state)
{
	struct elf_file *ef = elf_file_open(rep.path);
	uint64_t off, val = 0;
	int fd;

	assert_non_null(ef);
	assert_int_equal(elf_file_vaddr_to_offset(ef, rep.global, &off), 0);
	fd = open(rep.path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &val, sizeof(val), off), sizeof(val));
	close(fd);
	assert_int_equal(val, 0x1122334455667788ull);
	assert_int_equal(elf_file_vaddr_to_offset(ef, 0xffffffffff000000ull, &off), -1);
	elf_file_close(ef);
}

static void test_sources_and_dwarf(void **state)
{
	struct elf_file *ef = elf_file_open(rep.path);
	char id[64];
	uint64_t off = 0, size = 0;

	assert_non_null(ef);
	/* Built by the suite with -g and not stripped. */
	assert_int_equal(elf_file_sym_source(ef), SYM_SYMTAB);
	assert_string_equal(sym_source_name(SYM_SYMTAB), "symtab");
	assert_true(elf_file_has_dwarf(ef));
	assert_true(elf_file_is_pie(ef) == (rep.bias != 0));
	assert_int_equal(elf_file_build_id(ef, id, sizeof(id)), 0);
	assert_int_equal(strlen(id), 40);

	assert_int_equal(elf_file_field_offset(ef, "dbtap_test_struct", "the_field", &off, &size), 0);
	assert_int_equal(off, rep.field_off);
	assert_int_equal(size, rep.field_size);
	assert_int_equal(elf_file_field_offset(ef, "dbtap_test_struct", "no_field", &off, &size), -1);
	off = size = 0;
	assert_int_equal(elf_file_var_pointee_field(ef, "dbtap_test_ptr", "the_field", &off, &size), 0);
	assert_int_equal(off, rep.field_off);
	assert_int_equal(size, rep.field_size);
	elf_file_close(ef);
}

/* proc_load_bias of the running workload equals what dl_iterate_phdr told it. */
static void test_load_bias(void **state)
{
	uint64_t bias = 1;

	assert_int_equal(proc_load_bias(rep.pid, rep.path, &bias), 0);
	assert_int_equal(bias, rep.bias);
	assert_true(proc_addr_mapped(rep.pid, rep.bias + rep.global, 8));
}

static void test_open_errors(void **state)
{
	assert_null(elf_file_open("/nonexistent/binary"));
	assert_null(elf_file_open("/proc/self/status")); /* not ELF */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_symbols),
		cmocka_unit_test(test_alias_tie_table_order),
		cmocka_unit_test(test_plt_stub),
		cmocka_unit_test(test_vaddr_to_offset),
		cmocka_unit_test(test_sources_and_dwarf),
		cmocka_unit_test(test_load_bias),
		cmocka_unit_test(test_open_errors),
	};
	return cmocka_run_group_tests(tests, start_workload, stop_workload);
}
