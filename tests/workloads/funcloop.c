/*
 * A target with known call counts: waits for SIGUSR1 (or starts at once with -n),
 * calls funcloop_work() N times, each followed by a USDT probe funcloop:tick that has
 * a semaphore, then prints its own counts and exits. -s US makes each call sleep.
 * Prints "pid P semaphore 0xADDR" first so tests can read the semaphore from memory.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

unsigned short funcloop_tick_semaphore __attribute__((section(".probes"))) = 0;

static volatile sig_atomic_t go;
volatile unsigned long funcloop_sink;
static long sleep_us;

static void on_usr1(int sig)
{
	go = 1;
}

__attribute__((noinline)) void funcloop_work(long i)
{
	if (sleep_us)
		usleep(sleep_us);
	funcloop_sink += i;
	__asm__ volatile("" ::: "memory");
}

/* Never called: a function tests can probe and expect zero hits from. */
__attribute__((noinline)) void funcloop_idle(void)
{
	funcloop_sink = 0;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = 1000, i, ticks = 0;
	int opt, wait = 1;

	while ((opt = getopt(argc, argv, "ns:")) != -1) {
		if (opt == 'n')
			wait = 0;
		else if (opt == 's')
			sleep_us = atol(optarg);
		else
			return 2;
	}
	if (optind < argc)
		n = atol(argv[optind]);
	sigset_t block, old;

	/* Blocked until sigsuspend, so a signal sent right after the banner is not lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGUSR1, on_usr1);
	printf("pid %d semaphore %p\n", (int)getpid(), (void *)&funcloop_tick_semaphore);
	fflush(stdout);
	while (wait && !go)
		sigsuspend(&old);
	/* the kernel's count of the loop's voluntary switches (each sleep's, and any wakeup
	 * inside one that was not its timer's, after which the sleep goes on) and
	 * involuntary ones (a preemption; or a sleep whose timer fired before it called
	 * schedule(), which still switches out there when another task is picked) */
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	for (i = 0; i < n; i++) {
		funcloop_work(i);
		if (funcloop_tick_semaphore)
			ticks++;
		DTRACE_PROBE1(funcloop, tick, i);
	}
	getrusage(RUSAGE_SELF, &ru1);
	printf("calls %ld ticks_enabled %ld\n", n, ticks);
	printf("voluntary_switches %ld\n", ru1.ru_nvcsw - ru0.ru_nvcsw);
	printf("involuntary_switches %ld\n", ru1.ru_nivcsw - ru0.ru_nivcsw);
	return 0;
}
