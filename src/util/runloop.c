/* Interval/duration loop with signal handling shared by the tracing commands. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "util/runloop.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t tearing_down;
static char teardown_note[256];
static size_t teardown_note_len;
static volatile sig_atomic_t nsignals;

static void on_signal(int sig)
{
	/* The final report is out: a second Ctrl-C means "stop waiting". */
	if (tearing_down)
		_exit(128 + sig);
	stop_signal = sig;
	nsignals++;
}

unsigned runloop_signals(void)
{
	return nsignals;
}

static void on_alarm(int sig)
{
	if (tearing_down && teardown_note_len) {
		ssize_t r = write(STDERR_FILENO, teardown_note, teardown_note_len);
		(void)r;
	}
}

void runloop_teardown_begin(const char *note, int delay_ms)
{
	struct itimerval it = { .it_value = { delay_ms / 1000, (delay_ms % 1000) * 1000 } };
	struct sigaction sa;
	int n = snprintf(teardown_note, sizeof(teardown_note),
			 "%s... (Ctrl-C to stop waiting)\n", note);

	teardown_note_len = n > 0 && (size_t)n < sizeof(teardown_note) ? (size_t)n : 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART; /* the teardown's own system calls go on */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	tearing_down = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

void runloop_teardown_end(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	tearing_down = 0;
}

bool runloop_stopped(void)
{
	return stop_signal != 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

double parse_seconds(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* strtod takes "nan" and "inf": neither is a number of seconds */
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e7)
		return -1;
	return v;
}

void runloop_init(struct runloop *rl, double interval_s, double duration_s)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	rl->start_ns = rl->last_ns = now_ns();
	rl->interval_ns = (uint64_t)(interval_s * 1e9);
	rl->duration_ns = (uint64_t)(duration_s * 1e9);
	rl->next_ns = rl->interval_ns ? rl->start_ns + rl->interval_ns : 0;
}

enum runloop_event runloop_wait(struct runloop *rl, int poll_ms, bool (*check)(void *), void *arg)
{
	for (;;) {
		if (stop_signal)
			return RUNLOOP_STOPPED;
		uint64_t now = now_ns();
		uint64_t end = rl->duration_ns ? rl->start_ns + rl->duration_ns : UINT64_MAX;
		if (now >= end)
			return RUNLOOP_DONE;
		if (rl->next_ns && now >= rl->next_ns) {
			rl->next_ns += rl->interval_ns;
			if (rl->next_ns <= now) /* we were late: do not fire a burst */
				rl->next_ns = now + rl->interval_ns;
			return RUNLOOP_TICK;
		}
		uint64_t wake = end;
		if (rl->next_ns && rl->next_ns < wake)
			wake = rl->next_ns;
		if (poll_ms > 0 && now + (uint64_t)poll_ms * 1000000ull < wake)
			wake = now + (uint64_t)poll_ms * 1000000ull;
		if (wake == UINT64_MAX)
			wake = now + 1000000000ull;
		uint64_t d = wake - now;
		struct timespec ts = { d / 1000000000ull, d % 1000000000ull };
		nanosleep(&ts, NULL); /* EINTR on a signal: checked at the top */
		if (check && !stop_signal && !check(arg))
			return RUNLOOP_DONE;
	}
}

int runloop_due_ms(const struct runloop *rl, int max_ms)
{
	uint64_t now = now_ns(), due = UINT64_MAX;

	if (rl->next_ns)
		due = rl->next_ns;
	if (rl->duration_ns && rl->start_ns + rl->duration_ns < due)
		due = rl->start_ns + rl->duration_ns;
	if (due <= now)
		return 0;
	if (due - now >= (uint64_t)max_ms * 1000000ull)
		return max_ms;
	return (int)((due - now + 999999) / 1000000);
}

double runloop_elapsed(struct runloop *rl)
{
	uint64_t now = now_ns();
	double s = (now - rl->last_ns) / 1e9;
	rl->last_ns = now;
	return s;
}

double runloop_total(const struct runloop *rl)
{
	return (now_ns() - rl->start_ns) / 1e9;
}
