/*
 * A binary with known symbols for the ELF unit tests: prints where its own global,
 * function and struct field are, measured from the inside (dl_iterate_phdr's load
 * bias, offsetof), then waits until stdin closes so its maps can be read.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

struct dbtap_test_struct {
	int a;
	char pad[13];
	uint64_t the_field;
	short tail;
};

/* Initialized: in .data, so its bytes are in the file at the offset the test computes. */
volatile uint64_t dbtap_test_global = 0x1122334455667788ull;
struct dbtap_test_struct *volatile dbtap_test_ptr;

__attribute__((noinline)) int dbtap_test_function(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + (int)dbtap_test_global;
}

/*
 * Aliases of dbtap_test_function: an address is named by the global name with the
 * fewest leading underscores, before a longer weak one.
 */
extern int __dbtap_test_alias(int) __attribute__((alias("dbtap_test_function")));
extern int dbtap_test_function_weak_alias(int)
	__attribute__((weak, alias("dbtap_test_function")));

/*
 * Aliases alike in binding, leading underscores and length: the one first in the
 * symbol table names the address, as perf chooses (the test reads the table's order).
 */
__attribute__((noinline)) int __dbtap_test_tie(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 5 + (int)dbtap_test_global;
}
extern int dbtap_tie_zz(int) __attribute__((alias("__dbtap_test_tie")));
extern int dbtap_tie_aa(int) __attribute__((alias("__dbtap_test_tie")));

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	/* The first object is the executable itself. */
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

int main(void)
{
	static struct dbtap_test_struct s;
	uint64_t bias = 0;
	char c;

	dl_iterate_phdr(main_bias, &bias);
	dbtap_test_ptr = &s;
	printf("bias %#lx\n", (unsigned long)bias);
	printf("global %#lx %zu\n", (unsigned long)((uintptr_t)&dbtap_test_global - bias),
	       sizeof(dbtap_test_global));
	printf("function %#lx\n", (unsigned long)((uintptr_t)dbtap_test_function - bias));
#if defined(__x86_64__)
	{
		/* the stub in this binary's PLT that calls to read() go through */
		uintptr_t plt;
		__asm__("leaq read@PLT(%%rip), %0" : "=r"(plt));
		printf("plt %#lx\n", (unsigned long)(plt - bias));
	}
#endif
	printf("tie %#lx\n", (unsigned long)((uintptr_t)__dbtap_test_tie - bias));
	printf("field %zu %zu\n", offsetof(struct dbtap_test_struct, the_field),
	       sizeof(s.the_field));
	printf("call %d\n", dbtap_test_function(1));
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
