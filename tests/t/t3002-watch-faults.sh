#!/bin/bash
test_description='dbtap watch: bad input and faults are explained, and no breakpoint stays behind'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

test_expect_success 'set up a cluster and a workload' '
	pg_start pg "autovacuum = off" &&
	watched_start wl 1 1
'

# expect_error CODE PATTERN HINT-PATTERN ARGS...: dbtap watch ARGS exits CODE, says
# PATTERN on stderr with a hint matching HINT-PATTERN, prints nothing on stdout.
expect_error() {
	local code=$1 pat=$2 hpat=$3
	shift 3
	test_expect_code "$code" dbtap watch "$@" >out 2>err &&
	test_grep "^error: .*$pat" err &&
	test_grep "^hint: .*$hpat" err &&
	test_must_be_empty out
}

test_must_be_empty() {
	[ ! -s "$1" ] || { echo "$1 is not empty:"; cat "$1"; return 1; }
}

test_expect_success 'unaligned address for the length: exit 2, says so' '
	expect_error 2 "not aligned to its length 8" "multiple of 8" "ShmemVariableCache->9:8" --pg="$PGDATA" &&
	slots_free
'

test_expect_success 'a length that is not 1, 2, 4 or 8' '
	expect_error 2 "length 3 .* not 1, 2, 4 or 8" "1, 2, 4 or 8" "ShmemVariableCache->8:3" --pg="$PGDATA" &&
	expect_error 2 "length 16" "1, 2, 4 or 8" "0x1000:16" -p "$(cat wl.pid)" &&
	slots_free
'

test_expect_success 'an unknown symbol: close names suggested' '
	expect_error 2 "no symbol .ShmemVariableCach. in" "did you mean: .*ShmemVariableCache" \
		"ShmemVariableCach->8:8" --pg="$PGDATA" &&
	slots_free
'

test_expect_success '->FIELD without debug info: how to give the offset instead' '
	expect_error 2 "needs debug info to find field .nextXid." "byte offset instead, e.g. .ShmemVariableCache->8:8." \
		"ShmemVariableCache->nextXid" --pg="$PGDATA" &&
	slots_free
'

test_expect_success 'a NULL pointer (MyProc in the postmaster): exit 1' '
	expect_error 1 "MyProc. is NULL in process $PG_PID" "retry later" "MyProc->8:4" --pg="$PGDATA" &&
	expect_error 1 "null_ptr. is NULL" "retry later" "null_ptr->8:8" -p "$(cat wl.pid)" &&
	slots_free
'

test_expect_success 'a pointer to unmapped memory, an unmapped address: exit 1' '
	expect_error 1 "wild_ptr. points to 0x1000, which is not mapped" "not valid" \
		"wild_ptr->0:8" -p "$(cat wl.pid)" &&
	expect_error 1 "ShmemVariableCache. points to 0x[0-9a-f]*, and 0x[0-9a-f]* .* is not mapped" "offset" \
		"ShmemVariableCache->0x100000000:8" --pg="$PGDATA" &&
	expect_error 1 "address 0x10 of .0x10:8. is not mapped in process" "maps" "0x10:8" -p "$(cat wl.pid)" &&
	slots_free
'

test_expect_success 'bad options: exit 2 with a hint' '
	expect_error 2 "watch needs WHAT" "dbtap watch xid" --pg="$PGDATA" &&
	expect_error 2 "bad --by .who." "--by pid" xid --by who --pg="$PGDATA" &&
	expect_error 2 "bad --mode .fast." "--mode poll" xid --mode fast --pg="$PGDATA" &&
	expect_error 2 "--mode poll cannot tell who wrote" "drop --by" xid --mode poll --by pid --pg="$PGDATA" &&
	expect_error 2 "needs a target" "--pg" plain_counter &&
	expect_error 2 "bad watch expression .12345.: addresses are written in hexadecimal" "0xADDRESS" 12345 --pg="$PGDATA" &&
	expect_error 2 "cannot trap on reads alone" ":rw" "plain_counter:r" -p "$(cat wl.pid)" &&
	expect_error 2 "cannot tell how many bytes" ":8" "stats+8" -p "$(cat wl.pid)" &&
	expect_error 2 "unknown option" "--help" xid --frobnicate --pg="$PGDATA" &&
	slots_free
'

test_expect_success 'all breakpoint slots taken: exit 1, says how many, offers poll mode' '
	slots_free || return 1
	"$WORKLOADS"/bpslots 4 30 >held 2>held.err &
	holder=$! &&
	test_when_finished "kill $holder 2>/dev/null; true" &&
	for i in $(seq 1 100); do grep -q holding held.err && break; sleep 0.05; done &&
	test_expect_code 1 dbtap watch xid --pg="$PGDATA" -d 1 >out 2>err;
	rc=$?;
	kill $holder; wait $holder;
	test $rc = 0 &&
	test "$(cat held)" = "$slots_base" &&
	test_grep "^error: no free hardware breakpoint slot on cpu [0-9]*: all 4 are taken" err &&
	test_grep "^hint: other tools may hold them" err &&
	test_grep "^hint: .*--mode poll" err &&
	# the hint repeats the target the user gave
	test_grep "^hint: .*dbtap watch xid --pg=$PGDATA --mode poll" err &&
	slots_free &&
	dbtap watch xid --pg="$PGDATA" --mode poll -d 0.2 -j >poll.json &&
	json_py "assert d[\"mode\"] == \"poll\"" <poll.json
'

test_expect_success 'the cluster stops during a -d run: what was collected, exit 0' '
	pg_start pg2 "autovacuum = off" &&
	watch_start s.json xid --pg="$PGDATA" -d 60 -j --by pid &&
	xid_calls 7 spid >/dev/null &&
	pg_stop pg2 &&
	watch_wait &&
	test_grep "postmaster pid $PG_PID) exited; stopping" s.json.err &&
	json_py "
assert d[\"report\"] == \"summary\" and d[\"end\"] == \"target exited\", d
assert d[\"total\"] == 7 and d[\"processes\"][0][\"pid\"] == $(cat spid), d
assert d[\"duration_s\"] < 30, d
" <s.json &&
	slots_free
'

test_expect_success 'the -p process exits: summary, exit 0' '
	pg_use pg &&
	watched_start wl2 100 2 &&
	watch_start p.json plain_counter -p "$(cat wl2.pid)" -j &&
	watched_go wl2 &&
	kill "$(cat wl2.pid)" &&
	watch_wait &&
	test_grep "exited; stopping" p.json.err &&
	json_py "assert d[\"end\"] == \"target exited\" and d[\"total\"] == 200, d" <p.json &&
	slots_free
'

test_expect_success 'SIGTERM: final summary, exit 0, slots free' '
	watch_start t.json xid --pg="$PGDATA" -j &&
	watch_stop TERM &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\"" <t.json &&
	slots_free
'

test_expect_success 'killed with SIGKILL: the kernel frees the slots with the fds' '
	watch_start k.json xid --pg="$PGDATA" -j &&
	kill -KILL $WATCH_PID && { wait $WATCH_PID; WATCH_PID=; true; } &&
	slots_free
'

test_done
