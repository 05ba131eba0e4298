/* Workload with a known instruction count: K iterations of a 2-instruction loop on SIGUSR1. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * insnloop K: prints "ready PID", waits for SIGUSR1, runs `1: dec %rcx; jnz 1b` K times
 * (2K user instructions, K taken branches but the last), prints "looped K" and waits to
 * be killed. For checking hardware counters where there is a PMU.
 */
int main(int argc, char **argv)
{
	sigset_t set;
	int sig;
	unsigned long k;

	if (argc != 2 || (k = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: insnloop K\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);
#if defined(__x86_64__)
	unsigned long n = k;
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#else
	for (volatile unsigned long i = 0; i < k; i++)
		;
#endif
	printf("looped %lu\n", k);
	fflush(stdout);
	for (;;)
		pause();
}
