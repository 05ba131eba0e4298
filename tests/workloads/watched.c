/* A process with known writes to known variables, for dbtap watch's tests. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct watched_stats {
	long pad;
	long counter;    /* offset 8 */
	int small;       /* offset 16 */
};

struct watched_stats stats;
struct watched_stats *stats_ptr = &stats;
struct watched_stats *null_ptr;
struct watched_stats *wild_ptr = (struct watched_stats *)0x1000; /* never mapped */
volatile long plain_counter;

static long iterations;

static void *writer(void *arg)
{
	for (long i = 0; i < iterations; i++) {
		__atomic_add_fetch(&plain_counter, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&stats_ptr->counter, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&stats_ptr->small, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * usage: watched N THREADS GO_FILE
 * Prints "ready PID", waits until GO_FILE exists, then THREADS new threads each add 1
 * to plain_counter, stats.counter and stats.small N times (the threads start after
 * the tracer attached); prints "done TOTAL" and waits for stdin to close or a signal.
 */
int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: watched N THREADS GO_FILE\n");
		return 2;
	}
	iterations = atol(argv[1]);
	int nthreads = atoi(argv[2]);
	pthread_t th[64];

	if (nthreads < 1 || nthreads > 64)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (access(argv[3], F_OK) != 0)
		usleep(10000);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, writer, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("done %ld\n", plain_counter);
	fflush(stdout);
	pause();
	return 0;
}
