/* Interval/duration loop with signal handling shared by the tracing commands. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/runloop.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
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
	if (errno || end == s || *end || v < 0 || v > 1e7)
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
