/* Unit tests for perf/counter.c and perf/event.c: multiplex scaling, derived figures, names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/stathash.h"
#include "perf/counter.h"
#include "perf/event.h"

static void test_delta(void **state)
{
	struct counter_value a = { 100, 1000, 500 }, b = { 250, 3000, 1500 };
	struct counter_value d = counter_delta(&b, &a);

	assert_int_equal(d.value, 150);
	assert_int_equal(d.enabled, 2000);
	assert_int_equal(d.running, 1000);
	/* a counter that went backwards (a reopened thread) reads as 0, not 2^64 - x */
	d = counter_delta(&a, &b);
	assert_int_equal(d.value, 0);
	assert_int_equal(d.enabled, 0);
}

static void test_scale(void **state)
{
	double v, pct;
	struct counter_value full = { 1000, 5000, 5000 };
	struct counter_value quarter = { 1000, 4000, 1000 };
	struct counter_value never = { 0, 4000, 0 };
	struct counter_value idle = { 0, 0, 0 };

	assert_true(counter_scale(&full, &v, &pct));
	assert_true(v == 1000.0 && pct == 100.0);
	/* counted a quarter of the time: perf's estimate is 4x, shown as 25 % */
	assert_true(counter_scale(&quarter, &v, &pct));
	assert_true(v == 4000.0);
	assert_true(pct == 25.0);
	/* enabled but never on a counter: nothing can be said, not a zero */
	assert_false(counter_scale(&never, &v, &pct));
	/* a task that never ran in the window: its counters did not move, a true 0 */
	assert_true(counter_scale(&idle, &v, &pct));
	assert_true(v == 0.0 && pct == 100.0);
	/* running above enabled (rounding in the kernel) is not scaled down */
	struct counter_value over = { 10, 100, 101 };
	assert_true(counter_scale(&over, &v, &pct));
	assert_true(v == 10.0);
}

static void parse_or_fail(const char *name, struct perf_event_desc *ev)
{
	if (perf_event_parse(name, ev))
		fail_msg("'%s' did not parse", name);
}

static void test_metrics(void **state)
{
	struct perf_event_desc evs[6];
	double vals[6] = { 2e9, 4000, 3000, 40, 1000, 25 };
	bool counted[6] = { true, true, true, true, true, true };
	struct counter_metrics m;

	parse_or_fail("task-clock", &evs[0]);
	parse_or_fail("cycles:u", &evs[1]);
	parse_or_fail("instructions:u", &evs[2]);
	parse_or_fail("branch-misses", &evs[3]);
	parse_or_fail("branches", &evs[4]);
	parse_or_fail("cache-misses", &evs[5]);

	counter_metrics_compute(evs, vals, counted, 6, 4.0, &m);
	assert_true(m.ok[METRIC_CPUS_UTILIZED]);
	assert_true(fabs(m.v[METRIC_CPUS_UTILIZED] - 0.5) < 1e-12); /* 2 s of CPU in 4 s */
	assert_true(m.ok[METRIC_IPC]);
	assert_true(fabs(m.v[METRIC_IPC] - 0.75) < 1e-12);          /* 3000 / 4000 */
	assert_true(m.ok[METRIC_BRANCH_MISS]);
	assert_true(fabs(m.v[METRIC_BRANCH_MISS] - 4.0) < 1e-12);   /* 40 / 1000 = 4 % */
	/* cache-misses without cache-references: no ratio */
	assert_false(m.ok[METRIC_CACHE_MISS]);

	/* an uncounted denominator gives no IPC; a zero one neither */
	counted[1] = false;
	counter_metrics_compute(evs, vals, counted, 6, 4.0, &m);
	assert_false(m.ok[METRIC_IPC]);
	counted[1] = true;
	vals[1] = 0;
	counter_metrics_compute(evs, vals, counted, 6, 4.0, &m);
	assert_false(m.ok[METRIC_IPC]);
	/* no window, no utilization */
	counter_metrics_compute(evs, vals, counted, 6, 0, &m);
	assert_false(m.ok[METRIC_CPUS_UTILIZED]);

	struct perf_event_desc cm[2];
	double cv[2] = { 5, 200 };
	bool cc[2] = { true, true };
	parse_or_fail("cache-misses", &cm[0]);
	parse_or_fail("cache-references", &cm[1]);
	counter_metrics_compute(cm, cv, cc, 2, 1, &m);
	assert_true(m.ok[METRIC_CACHE_MISS]);
	assert_true(fabs(m.v[METRIC_CACHE_MISS] - 2.5) < 1e-12);
}

static void test_parse(void **state)
{
	struct perf_event_desc ev;

	parse_or_fail("task-clock", &ev);
	assert_int_equal(ev.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_false(ev.hardware);
	assert_true(counter_event_is_clock(&ev));

	parse_or_fail("page-faults", &ev);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	parse_or_fail("cs", &ev);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	parse_or_fail("major-faults", &ev);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_PAGE_FAULTS_MAJ);

	parse_or_fail("instructions:u", &ev);
	assert_int_equal(ev.attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(ev.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_true(ev.hardware);
	assert_int_equal(ev.attr.exclude_kernel, 1);
	assert_int_equal(ev.attr.exclude_user, 0);
	assert_string_equal(ev.name, "instructions:u");

	parse_or_fail("cycles:k", &ev);
	assert_int_equal(ev.attr.exclude_kernel, 0);
	assert_int_equal(ev.attr.exclude_user, 1);
	parse_or_fail("cycles", &ev);
	assert_int_equal(ev.attr.exclude_kernel, 0);
	assert_int_equal(ev.attr.exclude_user, 0);
	parse_or_fail("branches:uk", &ev);
	assert_int_equal(ev.attr.config, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	assert_int_equal(ev.attr.exclude_kernel, 0);
	assert_int_equal(ev.attr.exclude_user, 0);

	/* cache events: id | op << 8 | result << 16, as perf encodes them */
	parse_or_fail("L1-dcache-load-misses", &ev);
	assert_int_equal(ev.attr.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(ev.attr.config, 0x10000);
	parse_or_fail("dTLB-load-misses", &ev);
	assert_int_equal(ev.attr.config, 0x10003);
	parse_or_fail("iTLB-load-misses", &ev);
	assert_int_equal(ev.attr.config, 0x10004);

	parse_or_fail("r00c0", &ev);
	assert_int_equal(ev.attr.type, PERF_TYPE_RAW);
	assert_int_equal(ev.attr.config, 0xc0);
	assert_true(ev.hardware);
	parse_or_fail("r1a2b:u", &ev);
	assert_int_equal(ev.attr.config, 0x1a2b);
	assert_int_equal(ev.attr.exclude_kernel, 1);

	assert_int_equal(perf_event_parse("instrctions", &ev), -1);
	assert_int_equal(perf_event_parse("task-clock:x", &ev), -1);
	assert_int_equal(perf_event_parse("", &ev), -1);
}

static void test_parse_list(void **state)
{
	struct perf_event_desc *evs;
	int n;

	assert_int_equal(perf_event_parse_list("task-clock,page-faults,instructions:u", &evs, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(evs[2].name, "instructions:u");
	free(evs);
	assert_int_equal(perf_event_parse_list(perf_event_defaults, &evs, &n), 0);
	assert_int_equal(n, 8);
	free(evs);
	assert_int_equal(perf_event_parse_list("task-clock,", &evs, &n), -1);
	assert_int_equal(perf_event_parse_list("task-clock,task-clock", &evs, &n), -1);
	assert_int_equal(perf_event_parse_list(",", &evs, &n), -1);
}

static void test_similar(void **state)
{
	const char *out[4];
	int n = perf_event_similar("instrutcions", out, 4);

	assert_true(n >= 1);
	assert_string_equal(out[0], "instructions");
	n = perf_event_similar("page-fault", out, 4);
	assert_true(n >= 1);
	assert_string_equal(out[0], "page-faults");
	n = perf_event_similar("dtlb-load-misses", out, 4);
	assert_true(n >= 1);
	assert_string_equal(out[0], "dTLB-load-misses");
	assert_int_equal(perf_event_similar("zzzzzzzzzzzzzzzz", out, 4), 0);
}

/* The kernel's way: the table-driven automaton of stmthash.bpf.h. */
static __u64 hash_dfa_of(const char *s)
{
	static __u16 dfa[STATHASH_DFA_ENTRIES];
	static bool filled;
	struct stathash h;
	__u32 row = STATHASH_DFA_START;

	if (!filled) {
		stathash_dfa_fill(dfa);
		filled = true;
	}
	stathash_init(&h);
	for (; *s; s++)
		stathash_dfa_step(&h, &row, dfa, (unsigned char)*s);
	return stathash_final(&h);
}

static void test_stathash_dfa(void **state)
{
	static const char *texts[] = {
		"select * from t where a = 1", "update t set v = 'x' where id = 3",
		"select 1.2.3", "select 1..33", "/* /* */ 'a' */ x", "/* /* */ '*/ x' */ y",
		"select 'a\\' , 1 '", "select E'\\' , x'", "select $$it'$$ x", "select $1, 5",
		"select \"a 1\" from t", "select 1 -- don't\nfrom t1", "a--b/*c*/d*/e/**/f",
		"x$1y $a$ 1$2 _9 9_ \xc3\xa9" "t\xc3\xa9" "1", "", "-", "--", "/*", "*/", "'", "\"",
	};
	unsigned long seed = 12345;
	char buf[64];

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		assert_true(hash_dfa_of(texts[i]) == stathash_text(texts[i]));
	/* random texts over the bytes the automaton treats apart, and any byte */
	for (int n = 0; n < 20000; n++) {
		static const char alpha[] = "ab1_$'\"\\-/*\n .9E\x80";
		int len = n % 40;
		for (int k = 0; k < len; k++) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			unsigned char b = (seed >> 33) & 0xff;
			buf[k] = n % 3 ? alpha[b % (sizeof(alpha) - 1)] : (char)(b ? b : 1);
		}
		buf[len] = '\0';
		assert_true(hash_dfa_of(buf) == stathash_text(buf));
	}
}

static void test_stathash(void **state)
{
	/* literals do not make statements different */
	assert_true(stathash_text("select * from t where a = 1") ==
		    stathash_text("select * from t where a = 42"));
	assert_true(stathash_text("update t set v = 'x' where id = 3") ==
		    stathash_text("update t set v = 'yy' where id = 12345"));
	assert_true(stathash_text("select 1.5") == stathash_text("select 17.25"));
	/* finer than the normalizer where it must be: user space merges what it makes equal */
	assert_true(stathash_text("select 1.2.3") != stathash_text("select 1..33"));
	assert_true(stathash_text("select 'x'") != stathash_text("select ?"));
	/* nested comments end where PostgreSQL ends them */
	assert_true(stathash_text("/* /* */ 'a' */ x") != stathash_text("/* /* */ '*/ x' */ y"));
	/* from a backslash or a possible dollar quote on, every byte counts */
	assert_true(stathash_text("select 'a\\' , 1 '") != stathash_text("select 'bb' , 1 '"));
	assert_true(stathash_text("select E'\\' , x'") != stathash_text("select E'' , x''"));
	assert_true(stathash_text("select $$it'$$ x") != stathash_text("select $$it'anything"));
	assert_true(stathash_text("select $1, 5") == stathash_text("select $1, 6"));
	/* digits in identifiers, quoted identifiers and comments do */
	assert_true(stathash_text("select * from t1") != stathash_text("select * from t2"));
	assert_true(stathash_text("select \"a 1\" from t") != stathash_text("select \"a 2\" from t"));
	assert_true(stathash_text("select 1 -- don't\nfrom t1") !=
		    stathash_text("select 1 -- don't\nfrom t2"));
	assert_true(stathash_text("select /* it's */ a from t1") !=
		    stathash_text("select /* it's */ a from t2"));
	/* parameters are identifiers: $1 and $2 differ, as in pg_stat_statements */
	assert_true(stathash_text("select $1") != stathash_text("select $2"));
	assert_true(stathash_text("select a from t") != stathash_text("select b from t"));
	assert_true(stathash_text("") != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_similar),
		cmocka_unit_test(test_stathash),
		cmocka_unit_test(test_stathash_dfa),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
