#!/bin/bash
# t0001: the harness itself: prerequisites and cleanup after each test.
test_description='test-lib.sh: test_lazy_prereq, test_when_finished, test_before_each'
. "$(dirname "$0")"/../lib/test-lib.sh

# run_sub NAME 'test file body': runs a test file using the harness, output in NAME.out.
run_sub() {
	local f="$TRASH/t0001-sub-$1-$$.sh"
	{
		echo '#!/bin/bash'
		echo ". '$TEST_LIB/test-lib.sh'"
		printf '%s\n' "$2"
		echo 'test_done'
	} >"$f" || return 1
	bash "$f" >"$1.out" 2>"$1.err"
	local rc=$?
	# a failing sub-file keeps its trash directory: it is ours to remove
	rm -rf "$TEST_ROOT/tests/t/trash.t0001-sub-$1-$$"
	return $rc
}

test_expect_success 'test_when_finished runs after a passing and a failing test, last first' '
	test_must_fail run_sub wf "
test_expect_success pass \"
	test_when_finished \\\"echo first >>$TRASH/order\\\" &&
	test_when_finished \\\"echo second >>$TRASH/order\\\" &&
	true
\"
test_expect_success fail \"
	test_when_finished \\\"echo third >>$TRASH/order\\\" &&
	false
\"
test_expect_success clean \"
	true
\"
" &&
	printf "second\nfirst\nthird\n" >order.want &&
	test_cmp order.want order &&
	test_grep "^ok 1 - pass" wf.out &&
	test_grep "^not ok 2 - fail" wf.out &&
	test_grep "^ok 3 - clean" wf.out
'

test_expect_success 'a failing test_when_finished command fails the test' '
	test_must_fail run_sub wff "
test_expect_success body-passes \"
	test_when_finished false &&
	true
\"
" &&
	test_grep "^not ok 1 - body-passes" wff.out
'

test_expect_success 'test_lazy_prereq: evaluated once, on first use; missing ones skip' '
	run_sub lp "
test_lazy_prereq YES \"echo asked >>$TRASH/asked; true\"
test_lazy_prereq NO \"false\"
test_expect_success YES one \"true\"
test_expect_success YES,!NO two \"true\"
test_expect_success NO three \"false\"
test_expect_success !YES four \"false\"
test_expect_success UNDEFINED five \"false\"
" &&
	test "$(wc -l <asked)" = 1 &&
	test_grep "^ok 1 - one" lp.out &&
	test_grep "^ok 2 - two" lp.out &&
	test_grep "^ok 3 # skip three (missing NO)" lp.out &&
	test_grep "^ok 4 # skip four (missing !YES)" lp.out &&
	test_grep "^ok 5 # skip five (missing UNDEFINED)" lp.out &&
	test_grep "^1..5" lp.out
'

test_expect_success 'test_before_each hooks run before every body' '
	run_sub be "
test_before_each+=(\"echo hook >>$TRASH/hooks\")
test_expect_success a \"true\"
test_expect_success b \"true\"
" &&
	test "$(wc -l <hooks)" = 2
'

test_expect_success 'a body that returns early still runs its test_when_finished' '
	test_when_finished "touch returned.cleaned" &&
	for i in 1; do return 0; done
'

test_expect_success '... as the file goes on to see' '
	test -f returned.cleaned
'

test_done
