#!/bin/bash
test_description='dbtap profile: bad input refused with the input named, a hint, exit 2 (or 1), nothing left behind'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

# refused CODE PATTERN ARGS...: dbtap profile ARGS exits CODE, with an error matching
# PATTERN, a hint, and no output file left.
refused() {
	local code=$1 pat=$2
	shift 2
	test_expect_code "$code" dbtap profile "$@" >out 2>err &&
	test_grep "^error: .*$pat" err &&
	test_grep "^hint: " err &&
	! test -s out &&
	! ls *.svg* *.folded* 2>/dev/null | grep -q .
}

test_expect_success 'setup' '
	profloop_start pl.out
'

test_expect_success '-F 0, -F 100000 (over kernel.perf_event_max_sample_rate), -F x' '
	refused 2 "bad -F '"'"'0'"'"'" -p $PL_PID -F 0 &&
	refused 2 "bad -F '"'"'100000'"'"'" -p $PL_PID -F 100000 &&
	test_grep "perf_event_max_sample_rate" err &&
	refused 2 "bad -F '"'"'x'"'"'" -p $PL_PID -F x
'

test_expect_success 'an unknown event, a tracepoint this kernel does not have (close names hinted)' '
	refused 2 "unknown event '"'"'no-such-event'"'"'" -p $PL_PID -e no-such-event &&
	refused 2 "no tracepoint '"'"'tp:sched:sched_swich'"'"'" -p $PL_PID -e tp:sched:sched_swich &&
	test_grep "^hint: close ones: .*sched_switch" err &&
	refused 2 "bad tracepoint" -p $PL_PID -e tp: &&
	refused 2 "do not apply to tracepoint" -p $PL_PID -e tp:sched:sched_switch -F 99
'

test_expect_success 'cycles without a hardware PMU: refused, saying so, pointing at cpu-clock' '
	if ls /sys/bus/event_source/devices/cpu/type >/dev/null 2>&1; then
		say "this machine has a CPU PMU: cycles sample" &&
		dbtap profile -p $PL_PID -e cycles -d 1 -j >cy.json 2>cy.err &&
		json_py "assert d[\"samples\"] > 0, d" <cy.json
	else
		refused 1 "cannot sample on '"'"'cycles'"'"': not supported" -p $PL_PID -e cycles -d 1 &&
		test_grep "no hardware PMU" err &&
		test_grep "cpu-clock" err
	fi
'

test_expect_success 'no target; -a with a target; bad --by, -o, -c; --user with --kernel' '
	refused 2 "profile needs a target" -d 1 &&
	refused 2 "-a and a target" -a -p $PL_PID &&
	refused 2 "bad --by '"'"'query'"'"'" -p $PL_PID --by query &&
	refused 2 "cannot tell what to write to '"'"'x.png'"'"'" -p $PL_PID -o x.png &&
	refused 2 "cannot write '"'"'/nonexistent/x.svg'"'"'" -p $PL_PID -o /nonexistent/x.svg &&
	refused 2 "-c does not apply" -p $PL_PID -c 10 &&
	refused 2 "-F does not apply" -p $PL_PID -e page-faults -F 10 &&
	refused 2 "bad -c '"'"'0'"'"'" -p $PL_PID -e page-faults -c 0 &&
	refused 2 "leave nothing" -p $PL_PID --user --kernel &&
	refused 2 "unexpected argument" -p $PL_PID extra
'

test_expect_success 'a pid that is gone' '
	sh -c "exit 0" & gone=$!; wait $gone;
	refused 1 "$gone" -p $gone -d 1
'

test_expect_success 'Ctrl-C: the report still comes; the probes go with dbtap' '
	trace_start c.json profile -p $PL_PID -j &&
	pid=$TRACE_PID &&
	ls -l /proc/$pid/fd >fds.txt 2>/dev/null &&
	test_grep "anon_inode:bpf-prog\|anon_inode:\[perf_event\]" fds.txt &&
	trace_stop &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\", d" <c.json &&
	! test -e /proc/$pid
'

test_done
