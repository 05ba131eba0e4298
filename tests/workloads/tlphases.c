/*
 * A target for dbtap profile --timeline with a known timeline: N threads (named
 * "phase-0", "phase-1"...) are on CPU together for BUSY seconds, off CPU for IDLE
 * seconds, on CPU again for BUSY seconds; a barrier lines their phases up. Prints
 * each thread's tid and every phase with its CLOCK_MONOTONIC times, so a test can
 * place them on the timeline, and, since a loaded machine does not run a busy thread
 * all through its phase, what each thread got: its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) beside CLOCK_MONOTONIC, read every millisecond while it
 * spins and on each side of its sleep, as lines "cpu NAME MONOTONIC_S THREAD_CPU_S".
 *
 *   tlphases [-n THREADS] [-b BUSY] [-i IDLE]
 *     starts and names its threads, prints "ready PID", waits for SIGUSR1, runs the
 *     phases, prints its threads' clocks and "done", exits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double busy_s = 1, idle_s = 1;
static pthread_barrier_t bar, named, go;
static volatile unsigned long sink;

/* One thread's clocks as it went: a reading every millisecond of spinning. */
struct clocks {
	int id;
	char name[24]; /* "phase-N", N < 64: within the kernel's 16 bytes */
	double (*at)[2]; /* CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID */
	size_t n, cap;
};

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double mono(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void clocks_read(struct clocks *c, double now)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		double (*at)[2] = realloc(c->at, cap * sizeof(*at));
		if (!at)
			abort();
		c->at = at;
		c->cap = cap;
	}
	c->at[c->n][0] = now;
	c->at[c->n][1] = clock_s(CLOCK_THREAD_CPUTIME_ID);
	c->n++;
}

__attribute__((noinline)) static void spin(double until, struct clocks *c)
{
	double now, next = 0;

	while ((now = mono()) < until) {
		if (now >= next) {
			clocks_read(c, now);
			next = now + 0.001;
		}
		for (int i = 0; i < 10000; i++)
			sink += i;
	}
	clocks_read(c, mono());
}

static void *run(void *arg)
{
	struct clocks *c = arg;

	pthread_setname_np(pthread_self(), c->name);
	printf("thread %s %ld\n", c->name, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&bar);
	/* every thread takes the phase times from one shared start, so they line up */
	static double t0;
	if (c->id == 0)
		t0 = mono();
	pthread_barrier_wait(&bar);
	/* spin() reads the clocks as it ends and as it starts: on each side of the sleep */
	spin(t0 + busy_s, c);
	struct timespec d = { (time_t)idle_s, (long)((idle_s - (time_t)idle_s) * 1e9) };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
	spin(t0 + 2 * busy_s + idle_s, c);
	if (c->id == 0) {
		printf("phase busy %.6f %.6f\nphase idle %.6f %.6f\nphase busy %.6f %.6f\n", t0,
		       t0 + busy_s, t0 + busy_s, t0 + busy_s + idle_s, t0 + busy_s + idle_s,
		       t0 + 2 * busy_s + idle_s);
		fflush(stdout);
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	int opt, n = 2;
	sigset_t set;

	while ((opt = getopt(argc, argv, "n:b:i:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'b')
			busy_s = atof(optarg);
		else if (opt == 'i')
			idle_s = atof(optarg);
		else
			return 2;
	}
	if (n < 1 || n > 64)
		return 2;
	signal(SIGUSR1, on_usr1);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pthread_barrier_init(&bar, NULL, n);
	pthread_barrier_init(&named, NULL, n + 1);
	pthread_barrier_init(&go, NULL, n + 1);
	/*
	 * The threads are made and named before "ready", so that a tracer attached after
	 * it never sees one under the name it inherited (a sample between its start and
	 * its pthread_setname_np names its row); they wait off CPU until SIGUSR1.
	 */
	pthread_t *th = calloc(n, sizeof(*th));
	struct clocks *c = calloc(n, sizeof(*c));
	if (!th || !c)
		return 1;
	for (int i = 0; i < n; i++) {
		c[i].id = i;
		snprintf(c[i].name, sizeof(c[i].name), "phase-%d", i);
		pthread_create(&th[i], NULL, run, &c[i]);
	}
	pthread_barrier_wait(&named);
	printf("ready %d\n", getpid());
	fflush(stdout);
	int sig;
	sigwait(&set, &sig);
	pthread_barrier_wait(&go);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].n; k++)
			printf("cpu %s %.6f %.6f\n", c[i].name, c[i].at[k][0], c[i].at[k][1]);
	printf("done\n");
	fflush(stdout);
	return 0;
}
