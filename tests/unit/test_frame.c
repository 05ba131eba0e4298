/* Unit tests for cmd/frame.c: options from one table, usage made from it, the envelope. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/frame.h"

enum { OPT_HIST = FRAME_KEY_LONG, OPT_OLD };

static const struct frame_opt opts[] = {
	FRAME_OPTS_TARGET,
	FRAME_OPTS_TIME,
	{ "top", 'n', required_argument, "N", "rows to show" },
	{ "hist", OPT_HIST, required_argument, "SPEC", "log2 or linear\nsecond line" },
	{ "old", OPT_OLD, no_argument, NULL, "a deprecated spelling", FRAME_OPT_CMD, true },
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd fc = {
	.name = "demo",
	.args = "WHAT",
	.about = "What it does.\n",
	.examples = "  dbtap demo x\n",
	.opts = opts,
};

struct seen {
	int top, hist, old;
	char hist_arg[32];
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct seen *s = ctx;

	switch (key) {
	case 'n':
		s->top = atoi(arg);
		return s->top > 0 ? 0 : -1;
	case OPT_HIST:
		s->hist++;
		snprintf(s->hist_arg, sizeof(s->hist_arg), "%s", arg);
		return 0;
	case OPT_OLD:
		s->old++;
		return 0;
	}
	return -1;
}

static int parse(struct frame *f, struct seen *s, int argc, char **argv)
{
	memset(f, 0, sizeof(*f));
	memset(s, 0, sizeof(*s));
	global.json = false;
	optind = 0; /* what main.c does before each command */
	return frame_parse(f, &fc, argc, argv, on_opt, s);
}

static void test_parse(void **state)
{
	char *argv[] = { "demo", "-i", "0.5", "--pg", "-n", "3", "WHAT", "--hist=log2", "--old",
			 "-j", "-p", "1,2", "--duration", "4", NULL };
	struct frame f;
	struct seen s;

	assert_int_equal(parse(&f, &s, 14, argv), 0);
	assert_true(f.time.interval == 0.5 && f.time.duration == 4.0);
	assert_true(f.to.pg_set);
	assert_string_equal(f.to.pids, "1,2");
	assert_int_equal(s.top, 3);
	assert_int_equal(s.hist, 1);
	assert_string_equal(s.hist_arg, "log2");
	assert_int_equal(s.old, 1);
	assert_true(global.json);
	/* getopt_long moved the one word that is not an option to the end */
	assert_int_equal(optind, 13);
	assert_string_equal(argv[optind], "WHAT");
}

static void test_parse_errors(void **state)
{
	char *unknown[] = { "demo", "--nope", NULL };
	char *missing[] = { "demo", "-n", NULL };
	char *refused[] = { "demo", "-n", "0", NULL };
	char *badtime[] = { "demo", "-d", "0", NULL };
	struct frame f;
	struct seen s;

	assert_int_equal(parse(&f, &s, 2, unknown), EXIT_USAGE);
	assert_int_equal(parse(&f, &s, 2, missing), EXIT_USAGE);
	assert_int_equal(parse(&f, &s, 3, refused), EXIT_USAGE);
	assert_int_equal(parse(&f, &s, 3, badtime), EXIT_USAGE);
	assert_int_equal(frame_status(EXIT_USAGE), EXIT_USAGE);
}

static char *usage_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	frame_usage(&fc, f);
	fclose(f);
	return buf;
}

static void test_usage_from_table(void **state)
{
	char *u = usage_text();

	assert_non_null(strstr(u, "usage: dbtap demo WHAT [--pg [TARGET] | -p PID[,PID] | -t TID]"));
	assert_non_null(strstr(u, "[-i SECS] [-d SECS]"));
	assert_non_null(strstr(u, " [-n N] "));
	assert_non_null(strstr(u, "[--hist SPEC] [-j] [-v]\n"));
	assert_null(strstr(u, "[--old]"));
	/* every shown row is in the options list, with its help; hidden ones are not */
	for (const struct frame_opt *o = opts; o->name || o->key; o++) {
		if (o->name) {
			char spelt[64];
			snprintf(spelt, sizeof(spelt), "--%s", o->name);
			assert_true((strstr(u, spelt) != NULL) == !o->hidden);
		}
	}
	assert_non_null(strstr(u, "  -n, --top N           rows to show\n"));
	assert_non_null(strstr(u, "      --hist SPEC       log2 or linear\n"
				  "                        second line\n"));
	assert_non_null(strstr(u, "  -h, --help            this text\n"));
	assert_non_null(strstr(u, "\nexamples:\n  dbtap demo x\n"));
	for (char *l = u; *l;) {
		char *nl = strchr(l, '\n');
		assert_non_null(nl);
		assert_true(nl - l < 100); /* under 100 columns */
		l = nl + 1;
	}
	free(u);
}

static void test_help(void **state)
{
	char *argv[] = { "demo", "-i", "1", "--help", NULL };
	struct frame f;
	struct seen s;
	FILE *saved = stdout;
	char *buf = NULL;
	size_t len = 0;

	stdout = open_memstream(&buf, &len);
	int r = parse(&f, &s, 4, argv);
	fclose(stdout);
	stdout = saved;
	assert_int_equal(r, FRAME_HELP);
	assert_int_equal(frame_status(r), EXIT_OK);
	assert_non_null(strstr(buf, "usage: dbtap demo"));
	free(buf);
}

static char *envelope(const struct frame_report *r)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j);
	frame_json_begin(&j, r);
	json_object_end(&j);
	json_flush_line(&j, f);
	json_release(&j);
	fclose(f);
	return buf;
}

static void test_envelope(void **state)
{
	struct frame_report iv = { FRAME_INTERVAL, 1234.5678914, 1.0000004, NULL };
	struct frame_report sum = { FRAME_SUMMARY, 10.25, 10.25, "interrupted" };
	char *a = envelope(&iv), *b = envelope(&sum);

	/* microseconds, not more, and not %.6g's 1234.57 */
	assert_string_equal(a, "{\"report\":\"interval\",\"time_s\":1234.567891,\"interval_s\":1}\n");
	assert_string_equal(b, "{\"report\":\"summary\",\"time_s\":10.25,\"duration_s\":10.25,"
			       "\"end\":\"interrupted\"}\n");
	free(a);
	free(b);
}

static void test_width(void **state)
{
	assert_int_equal(frame_width(4, "ab"), 4);
	assert_int_equal(frame_width(4, "autovacuum launcher"), 19);
	assert_int_equal(frame_width(4, NULL), 4);
}

/* How long a poll callback may block: until the next interval or -d end, rounded up. */
static void test_due_ms(void **state)
{
	(void)state;
	uint64_t now = now_ns();
	struct runloop rl = { .start_ns = now, .next_ns = now + 50000000ull };

	int ms = runloop_due_ms(&rl, 100);
	assert_true(ms >= 1 && ms <= 50);
	assert_int_equal(runloop_due_ms(&rl, 10), 10);
	rl.next_ns = now - 1;
	assert_int_equal(runloop_due_ms(&rl, 100), 0);
	/* no interval: only the duration's end, or the cap */
	rl.next_ns = 0;
	assert_int_equal(runloop_due_ms(&rl, 100), 100);
	rl.duration_ns = 20000000ull;
	ms = runloop_due_ms(&rl, 100);
	assert_true(ms >= 0 && ms <= 20);
	rl.next_ns = now + 5000000000ull;
	assert_true(runloop_due_ms(&rl, 100) <= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_usage_from_table),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_due_ms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
