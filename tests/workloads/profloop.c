/*
 * A target for dbtap profile with a known profile: loop() calls f_a three times for
 * each call of f_b, each call doing the same work, so f_a has 75 % of the samples and
 * f_b 25 %, and every stack is main -> loop -> f_a or f_b. Built with frame pointers.
 *
 *   profloop [-w] [-s SECS] [-r DEPTH] [-t] [-n]
 *     prints "ready PID"; -w: then waits for SIGUSR1; runs the loop (for SECS seconds of
 *     its own CPU time, so that a loaded machine makes the run longer, not emptier; then
 *     prints "done" and sleeps until killed; without -s until killed). -r DEPTH:
 *     the loop runs DEPTH calls deep inside deep() (a stack deeper than the unwinder
 *     takes, when DEPTH is over 127). -t: loop_short() calls f_short() forever instead. -n: two
 *     threads named "pl-alpha" and "pl-beta" run the loop, the main thread sleeps; with
 *     -w they are created after SIGUSR1, and with -s each runs SECS CPU seconds, then
 *     sleeps (so its /proc/PID/task entry stays) and main prints "done" after both.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long profloop_sink;
static volatile unsigned long calls_a, calls_b;

/*
 * The same loop in both: equal work per call, no calls inside. Written in assembly
 * so that they set up a frame pointer: gcc leaves it out of leaf functions even with
 * -fno-omit-frame-pointer, and the unwinder would then skip loop(). Each call runs for
 * milliseconds against the three instructions of its prologue and epilogue, the only
 * places where a frame-pointer unwinder cannot see loop() yet (or any more).
 */
#define PROFLOOP_FUNC(name)                                                      \
	__asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n"  \
		"\tpush %rbp\n\tmov %rsp,%rbp\n\tmov $2000000,%ecx\n"                 \
		"1:\taddq %rcx,profloop_sink(%rip)\n\tdec %rcx\n\tjnz 1b\n"         \
		"\tpop %rbp\n\tret\n.size " #name ",.-" #name "\n");
PROFLOOP_FUNC(f_a)
PROFLOOP_FUNC(f_b)
void f_a(void);
void f_b(void);

/*
 * A function so short that most samples in it fall on its prologue or epilogue, where
 * the frame-pointer chain does not hold its caller (-t).
 */
__asm__(".text\n.globl f_short\n.type f_short,@function\nf_short:\n"
	"\tpush %rbp\n\tmov %rsp,%rbp\n\taddq $1,profloop_sink(%rip)\n"
	"\tpop %rbp\n\tret\n.size f_short,.-f_short\n");
void f_short(void);

__attribute__((noinline)) void loop_short(void)
{
	for (;;)
		f_short();
}

__attribute__((noinline)) void loop(double secs)
{
	struct timespec t0, t;

	/* asked at every turn: a turn is milliseconds of work, the clock a system call */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (;;) {
		f_a();
		f_a();
		f_a();
		f_b();
		calls_a += 3;
		calls_b++;
		if (secs > 0) {
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
			if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
		}
	}
}

/* Recursion with a frame per level; the asm barrier keeps it from becoming a loop. */
__attribute__((noinline)) void deep(int depth, double secs)
{
	if (depth > 0)
		deep(depth - 1, secs);
	else
		loop(secs);
	__asm__ volatile("" ::: "memory");
}

static double thread_secs;
static sem_t threads_done;

static void *thread_main(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	loop(thread_secs);
	sem_post(&threads_done);
	for (;;)
		pause();
	return NULL;
}

static void threads_start(void)
{
	pthread_t a, b;

	sem_init(&threads_done, 0, 0);
	pthread_create(&a, NULL, thread_main, "pl-alpha");
	pthread_create(&b, NULL, thread_main, "pl-beta");
}

static void on_usr1(int sig)
{
}

int main(int argc, char **argv)
{
	double secs = 0;
	int opt, wait = 0, depth = 0, tight = 0, threads = 0;
	sigset_t set, old;

	while ((opt = getopt(argc, argv, "ws:r:tn")) != -1) {
		if (opt == 'n')
			threads = 1;
		else if (opt == 't')
			tight = 1;
		else if (opt == 'w')
			wait = 1;
		else if (opt == 's')
			secs = atof(optarg);
		else if (opt == 'r')
			depth = atoi(optarg);
		else
			return 2;
	}
	thread_secs = secs;
	if (threads && !wait)
		threads_start();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	signal(SIGUSR1, on_usr1);
	sigprocmask(SIG_BLOCK, &set, &old);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (wait)
		sigsuspend(&old);
	if (threads && wait)
		threads_start();
	if (threads && secs > 0) {
		for (int n = 0; n < 2;)
			n += sem_wait(&threads_done) == 0;
		printf("done\n");
		fflush(stdout);
	}
	if (threads)
		for (;;)
			pause();
	if (tight)
		loop_short();
	if (depth)
		deep(depth, secs);
	else
		loop(secs);
	printf("done calls f_a %lu f_b %lu\n", calls_a, calls_b);
	fflush(stdout);
	for (;;)
		pause();
}
