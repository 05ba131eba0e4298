/*
 * A target with many distinct stacks, for the symbolization benchmark: main calls one
 * of N functions a_I, which calls one of N functions b_J, which calls work(): N x N
 * distinct stacks by name (128 x 128 = 16,384), visited in a scrambled order. Every
 * function keeps a frame pointer (work is written in assembly so that it does too).
 * Prints "ready PID", runs until killed.
 */
#include <stdio.h>
#include <unistd.h>

#define N 128

volatile unsigned long stacktree_sink;

__asm__(".text\n.globl work\n.type work,@function\nwork:\n"
	"\tpush %rbp\n\tmov %rsp,%rbp\n\tmov $3000,%ecx\n"
	"1:\taddq %rcx,stacktree_sink(%rip)\n\tdec %rcx\n\tjnz 1b\n"
	"\tpop %rbp\n\tret\n.size work,.-work\n");
void work(void);

typedef void (*fn_b)(void);
typedef void (*fn_a)(int);
extern fn_b btab[N];

#define B(i) __attribute__((noinline)) void b_##i(void) { work(); __asm__ volatile("" ::: "memory"); }
#define A(i) __attribute__((noinline)) void a_##i(int j) { btab[j](); __asm__ volatile("" ::: "memory"); }
#define X8(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7)
#define X64(M, p) X8(M, p##0) X8(M, p##1) X8(M, p##2) X8(M, p##3) X8(M, p##4) X8(M, p##5) \
	X8(M, p##6) X8(M, p##7)
#define X128(M) X64(M, 1) X64(M, 2)
X128(B)
X128(A)
#define REF_B(i) b_##i,
#define REF_A(i) a_##i,
fn_b btab[N] = { X128(REF_B) };
fn_a atab[N] = { X128(REF_A) };

int main(void)
{
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (unsigned long n = 0;; n++) {
		unsigned long k = (n * 2654435761ul) % (N * N);
		atab[k / N](k % N);
	}
}
