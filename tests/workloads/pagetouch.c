/* Test workload for dbtap stat: touches K fresh pages on SIGUSR1 (its own count printed), or spins. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * pagetouch K     prints "ready PID", waits for SIGUSR1, maps K pages and writes one
 *                 byte to each in touch_pages() (K minor faults: huge pages are refused
 *                 for the region so each page faults on its own), prints "touched K",
 *                 then waits to be killed. K = 0: the same steps without the touch.
 * pagetouch spin  burns CPU until killed (for task-clock against /proc).
 */
/* Every fault of the touch happens in here (a profile's stacks end in it). */
__attribute__((noinline)) long touch_pages(long k, long psz)
{
	char *p = mmap(NULL, k * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long touched = 0;

	if (p == MAP_FAILED)
		return -1;
	madvise(p, k * psz, MADV_NOHUGEPAGE);
	for (long i = 0; i < k; i++) {
		((volatile char *)p)[i * psz] = 1;
		touched++;
	}
	return touched;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	if (argc != 2) {
		fprintf(stderr, "usage: pagetouch K|spin\n");
		return 2;
	}
	if (!strcmp(argv[1], "spin")) {
		volatile unsigned long n = 0;
		printf("ready %d\n", getpid());
		fflush(stdout);
		for (;;)
			n++;
	}
	long k = atol(argv[1]);
	long psz = sysconf(_SC_PAGESIZE);
	if (k < 0)
		return 2;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);

	long touched = k ? touch_pages(k, psz) : 0;
	if (touched < 0)
		return 1;
	printf("touched %ld\n", touched);
	fflush(stdout);
	for (;;)
		pause();
}
