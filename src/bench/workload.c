/* dbtap bench's workload child: fork, threads, the call loops and their own counters. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/workload.h"
#include "util/error.h"

#ifdef __x86_64__
/* sites.S */
void bench_fn_nop(uint64_t);
void bench_fn_push(uint64_t);
void bench_fn_nop5(uint64_t);
void bench_fn_store(uint64_t);
void bench_fn_usdt(uint64_t);
void bench_fn_usdt_sema(uint64_t);
void bench_fn_syscall(uint64_t);
extern volatile uint64_t bench_watched;
#define SITE(fn) fn
#else
/* The sites are x86-64 assembly; elsewhere bench says it is not available. */
static volatile uint64_t bench_watched;
#define SITE(fn) NULL
#endif

static const struct {
	const char *symbol;
	const char *usdt;
	void (*fn)(uint64_t);
} sites[SITE_MAX] = {
	[SITE_NOP]       = { "bench_fn_nop", NULL, SITE(bench_fn_nop) },
	[SITE_PUSH]      = { "bench_fn_push", NULL, SITE(bench_fn_push) },
	[SITE_NOP5]      = { "bench_fn_nop5", NULL, SITE(bench_fn_nop5) },
	[SITE_STORE]     = { "bench_fn_store", NULL, SITE(bench_fn_store) },
	[SITE_USDT]      = { "bench_fn_usdt", "site", SITE(bench_fn_usdt) },
	[SITE_USDT_SEMA] = { "bench_fn_usdt_sema", "sema_site", SITE(bench_fn_usdt_sema) },
	[SITE_SYSCALL]   = { "bench_fn_syscall", NULL, SITE(bench_fn_syscall) },
};

bool bench_sites_available(void)
{
	return sites[SITE_NOP].fn != NULL;
}

const char *bench_site_symbol(enum bench_site site) { return sites[site].symbol; }
const char *bench_site_usdt(enum bench_site site) { return sites[site].usdt; }
uint64_t bench_watched_addr(void) { return (uint64_t)(uintptr_t)&bench_watched; }

struct thread_arg {
	struct bench_shared *sh;
	int idx;
	void (*fn)(uint64_t);
	enum bench_workload w;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int flag(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/*
 * The loops keep the stop check a plain load so that the unprobed baseline is a few
 * nanoseconds: the cost of a probe is what remains once it is subtracted.
 */
static uint64_t loop_trig(void (*fn)(uint64_t), const int *stop)
{
	uint64_t n = 0;
	while (!flag(stop)) {
		fn(n);
		n++;
	}
	return n;
}

/* The overhead blog's loop: 500 sin/cos/sqrt iterations, then one probed call. */
static uint64_t loop_math(void (*fn)(uint64_t), const int *stop)
{
	uint64_t n = 0;
	double x = 0.0;
	while (!flag(stop)) {
		for (int i = 0; i < 500; i++) {
			x += sin(i) * cos(n);
			x = sqrt(fabs(x + 1.0));
		}
		fn((uint64_t)x + n);
		n++;
	}
	return n;
}

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	struct bench_shared *sh = a->sh;
	struct bench_thread_result *r = &sh->t[a->idx];

	r->tid = gettid();
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (!flag(&sh->go) && !flag(&sh->stop))
		usleep(100);
	uint64_t t0 = mono_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t n = a->w == WORKLOAD_MATH ? loop_math(a->fn, &sh->stop) : loop_trig(a->fn, &sh->stop);
	r->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	r->elapsed_ns = mono_ns() - t0;
	r->iterations = n;
	__atomic_fetch_add(&sh->finished, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void __attribute__((noreturn)) child_main(struct bench_shared *sh, pid_t parent,
						  enum bench_site site, enum bench_workload w,
						  int nthreads)
{
	struct thread_arg args[BENCH_MAX_THREADS];
	pthread_t th[BENCH_MAX_THREADS];

	/* dbtap handles Ctrl-C and stops the child itself; if dbtap dies, so does the child. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, "dbtap-bench");

	for (int i = 0; i < nthreads; i++)
		args[i] = (struct thread_arg){ sh, i, sites[site].fn, w };
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, thread_main, &args[i]))
			_exit(1);
	thread_main(&args[0]);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static bool child_gone(struct bench_child *c, int *status)
{
	pid_t r = waitpid(c->pid, status, WNOHANG);
	return r == c->pid || (r < 0 && errno == ECHILD);
}

int bench_child_start(struct bench_child *c, enum bench_site site, enum bench_workload w,
		      int nthreads)
{
	memset(c, 0, sizeof(*c));
	c->nthreads = nthreads;
	c->sh = mmap(NULL, sizeof(*c->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->sh == MAP_FAILED) {
		c->sh = NULL;
		return error_errno("cannot map the workload's shared page");
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		munmap(c->sh, sizeof(*c->sh));
		c->sh = NULL;
		return error_errno("cannot fork the workload");
	}
	if (pid == 0)
		child_main(c->sh, parent, site, w, nthreads);
	c->pid = pid;

	/* Wait until every thread has published its tid and waits for go. */
	uint64_t deadline = mono_ns() + 10ull * 1000000000ull;
	while (flag(&c->sh->ready) < nthreads) {
		int status;
		if (child_gone(c, &status)) {
			c->pid = 0;
			bench_child_release(c);
			return error("the workload exited before it started");
		}
		if (mono_ns() > deadline) {
			bench_child_release(c);
			return error("the workload's %d threads did not start within 10 s", nthreads);
		}
		usleep(200);
	}
	return 0;
}

void bench_child_go(struct bench_child *c)
{
	__atomic_store_n(&c->sh->go, 1, __ATOMIC_SEQ_CST);
}

static void reap(struct bench_child *c, int *status)
{
	while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
}

int bench_child_stop(struct bench_child *c)
{
	int status = 0;

	if (!c->pid)
		return -1;
	__atomic_store_n(&c->sh->stop, 1, __ATOMIC_SEQ_CST);
	reap(c, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			return error("the workload was killed by signal %d (%s)", WTERMSIG(status),
				     strsignal(WTERMSIG(status)));
		return error("the workload failed (exit status %d)", WEXITSTATUS(status));
	}
	if (c->sh->finished != c->nthreads)
		return error("only %d of %d workload threads reported", c->sh->finished, c->nthreads);
	return 0;
}

void bench_child_kill(struct bench_child *c)
{
	int status;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap(c, &status);
	}
	c->pid = 0;
}

uint64_t bench_child_iterations(const struct bench_child *c)
{
	uint64_t n = 0;
	for (int i = 0; i < c->nthreads; i++)
		n += c->sh->t[i].iterations;
	return n;
}

double bench_child_rate(const struct bench_child *c, bool cpu)
{
	double rate = 0;
	for (int i = 0; i < c->nthreads; i++) {
		uint64_t ns = cpu ? c->sh->t[i].cpu_ns : c->sh->t[i].elapsed_ns;
		if (ns)
			rate += c->sh->t[i].iterations * 1e9 / ns;
	}
	return rate;
}

double bench_child_ns_per_call(const struct bench_child *c)
{
	uint64_t ns = 0, n = 0;
	for (int i = 0; i < c->nthreads; i++) {
		ns += c->sh->t[i].cpu_ns;
		n += c->sh->t[i].iterations;
	}
	return n ? (double)ns / n : NAN;
}

void bench_child_release(struct bench_child *c)
{
	bench_child_kill(c);
	if (c->sh)
		munmap(c->sh, sizeof(*c->sh));
	c->sh = NULL;
}
