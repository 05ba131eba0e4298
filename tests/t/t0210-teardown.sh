#!/bin/bash
test_description='the frame'"'"'s teardown: a slow one says so, a second Ctrl-C ends it, nothing stays'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/bpfobj.sh

W=$WORKLOADS/funcloop
[ -x "$W" ] || test_bail "$W is not built: run make"

test_expect_success 'a fast teardown says nothing' '
	funcloop_start l1.out 10 &&
	test_when_finished "kill \$LOOP_PID 2>/dev/null; funcloop_wait; :" &&
	dbtap count -p $LOOP_PID -j -d 0.2 usdt:$W:funcloop:tick >fast.json 2>fast.err &&
	test_must_fail grep -q "stop waiting" fast.err &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"duration\", d" <fast.json
'

# DBTAP_TEST_SLOW_TEARDOWN_MS makes the teardown wait that long before detaching.
test_expect_success 'a teardown over half a second says what it waits for, then ends normally' '
	funcloop_start l2.out 10 &&
	test_when_finished "kill \$LOOP_PID 2>/dev/null; funcloop_wait; :" &&
	DBTAP_TEST_SLOW_TEARDOWN_MS=1200 dbtap count -p $LOOP_PID -j -d 0.2 usdt:$W:funcloop:tick \
		>slow.json 2>slow.err &&
	test_grep "^detaching the probes... (Ctrl-C to stop waiting)$" slow.err &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"duration\", d" <slow.json &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 0
'

test_expect_success 'a second Ctrl-C during the teardown exits at once, after the summary; the kernel frees the rest' '
	funcloop_start l3.out 10 &&
	test_when_finished "kill \$LOOP_PID 2>/dev/null; funcloop_wait; :" &&
	DBTAP_TEST_SLOW_TEARDOWN_MS=60000 trace_start twice.json count -p $LOOP_PID -j \
		usdt:$W:funcloop:tick &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 1 &&
	bpf_objs_of $TRACE_PID >objs.attached &&
	grep -q "^prog " objs.attached &&
	kill -INT $TRACE_PID &&
	for i in $(seq 1 100); do grep -q "stop waiting" twice.json.err && break; sleep 0.05; done &&
	test_grep "stop waiting" twice.json.err &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\", d" <twice.json &&
	{ trace_stop INT; echo $? >rc; } &&
	test "$(cat rc)" = 130 &&
	bpf_objs_gone objs.attached &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 0
'

test_done
