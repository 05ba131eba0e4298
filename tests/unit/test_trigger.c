/* Unit tests for profile/trigger.c: the recorder's --trigger conditions. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile/trigger.h"

static void test_trigger_parse(void **state)
{
	struct trigger t;
	char buf[128];

	assert_int_equal(trigger_parse("p99>50ms for 3s", &t), 0);
	assert_int_equal(t.metric, TRIG_TXN_P99);
	assert_int_equal(t.op, TRIG_GT);
	assert_true(t.value == 50000 && t.for_s == 3);
	assert_string_equal(t.text, "p99>50ms for 3s");
	assert_int_equal(trigger_parse("  tps < 500 ", &t), 0);
	assert_true(t.metric == TRIG_TPS && t.op == TRIG_LT && t.value == 500 && t.for_s == 0);
	assert_string_equal(t.text, "tps < 500");
	assert_int_equal(trigger_parse("tps-drop>50%", &t), 0);
	assert_true(t.metric == TRIG_TPS_DROP && t.value == 50);
	assert_int_equal(trigger_parse("cpu>=80% for 500ms", &t), 0);
	assert_true(t.metric == TRIG_CPU && t.op == TRIG_GE && t.value == 80 && t.for_s == 0.5);
	assert_int_equal(trigger_parse("stmt-p90>1.5s", &t), 0);
	assert_true(t.metric == TRIG_STMT_P90 && t.value == 1.5e6);
	assert_int_equal(trigger_parse("max<=250us", &t), 0);
	assert_true(t.metric == TRIG_TXN_MAX && t.op == TRIG_LE && t.value == 250);
	assert_int_equal(trigger_parse("txn-p50>1ms", &t), 0);
	assert_int_equal(t.metric, TRIG_TXN_P50);
	trigger_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, "p50>1000us");
	assert_int_equal(trigger_parse("p99>50ms for 3s", &t), 0);
	trigger_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, "p99>50000us for 3s");
}

static void test_trigger_bad(void **state)
{
	struct trigger t;
	const char *bad[] = { "", "   ", "p98>1ms", "p99", "p99=5ms", "p99>5", "p99>ms", "p99>-5ms",
			      "p99>5msx", "tps<5 for", "tps<5 for x", "tps<5 for 2h", "tps<5 for 4000",
			      "cpu>120%", "tps-drop>101", "tps<500 or", "p99>nanms", "p99>infms",
			      "p99>1e400ms", "p99>0x10ms", "tps<.", "cpu>80%%" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (trigger_parse(bad[i], &t) != -1)
			fail_msg("accepted '%s'", bad[i]);
	}
}

static void test_trigger_holds(void **state)
{
	struct trigger t;

	assert_int_equal(trigger_parse("p99>50ms", &t), 0);
	assert_true(trigger_holds(&t, 50001));
	assert_false(trigger_holds(&t, 50000));
	assert_false(trigger_holds(&t, NAN)); /* no transaction finished: nothing to compare */
	assert_int_equal(trigger_parse("tps<=500", &t), 0);
	assert_true(trigger_holds(&t, 500));
	assert_false(trigger_holds(&t, 501));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trigger_parse),
		cmocka_unit_test(test_trigger_bad),
		cmocka_unit_test(test_trigger_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
