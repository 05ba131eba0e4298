#!/bin/bash
test_description='a SIGKILL at any moment (attach, tracing, teardown) leaves nothing behind'
. "$(dirname "$0")"/../lib/test-lib.sh

# The server runs from a private copy of its binary (pgcopy.sh): what is read from its
# memory here is this test's alone.
. "$TEST_LIB"/pgcopy.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/bpfobj.sh

KILLS=20
CYCLES=20
if [ -n "$DBTAP_TEST_LONG" ]; then
	KILLS=200
	CYCLES=200
fi

# dbtap under a name of its own: its processes, and those it forks, are found by comm.
KBIN="$TRASH/dbtapk$$"

# Load in the background: pgbench runs of 2 s one after the other until FILE exists,
# each one's report and exit status appended to LOG.
load_start() {
	rm -f "$1.stop"
	while [ ! -e "$1.stop" ]; do
		pgbench -n -c 2 -T 2 >>"$1" 2>&1
		echo "exit status $?" >>"$1"
	done &
	LOAD_PID=$!
	test_atexit "touch $1.stop"
}

# Lets the running pgbench finish (its report counts), then stops.
load_stop() {
	touch "$1.stop" && wait $LOAD_PID
}

# Stops at once: the run in progress is cut short (for load whose reports are not read).
load_kill() {
	touch "$1.stop" &&
	pkill -INT -P $LOAD_PID -x pgbench
	wait $LOAD_PID
}

# How many processes named $1 still live (a zombie has released its files and memory).
live_named() {
	ps -C "$1" -o stat= | grep -vc "^Z"
}

test_expect_success 'setup: a cluster from the private binary, under pgbench' '
	pg_start main &&
	test "$(readlink /proc/$PG_PID/exe)" = "$PG_BINDIR/postgres" &&
	pg_bench -i -q >init.log 2>&1 &&
	cp "$DBTAP" "$KBIN" &&
	load_start load.log &&
	BIN=$PG_BINDIR/postgres
'

test_expect_success "$KILLS kills of every tracing command, most during teardown" '
	D="--pg=$PGDATA -j -d 0.2" &&
	python3 "$TEST_LIB"/killtest.py --kills $KILLS --postmaster $PG_PID \
		--min-teardown $((KILLS / 4)) \
		--funcs "bms_*,PortalRun,GetNewTransactionId" -- \
		-- "$KBIN" count "usdt:postgresql:*" $D \
		-- "$KBIN" tps $D \
		-- "$KBIN" latency query $D \
		-- "$KBIN" count "uprobe:$BIN:bms_*" "uretprobe:$BIN:PortalRun" $D \
		-- "$KBIN" stat --per query -e task-clock $D \
		-- "$KBIN" latency "uprobe:$BIN:PortalRun" "uretprobe:$BIN:PortalRun" $D \
		-- "$KBIN" stat --per transaction -e task-clock $D \
		-- "$KBIN" watch xid $D \
		-- "$KBIN" profile --timeline $D \
		>kills.log 2>&1 ||
	{ cat kills.log; false; } &&
	tail -n1 kills.log &&
	n=$(sed -n "s/^ok \([0-9]*\) kills .*/\1/p" kills.log) &&
	test "$n" -ge $KILLS &&
	# the kills must really land during teardown, where a leak happens
	teardown=$(sed -n "s/.*teardown \([0-9]*\),.*/\1/p" kills.log) &&
	test "$teardown" -ge $((KILLS / 4))
'

test_expect_success 'the server log shows no crashed backend' '
	load_kill load.log &&
	! grep -E "terminated by signal|was terminated|PANIC" "$TRASH/main/server.log"
'

# Ctrl-C twice: the final report, then an exit that does not wait for the release.
test_expect_success 'a second Ctrl-C exits at once; the kernel still releases every probe' '
	"$KBIN" count "usdt:postgresql:*" --pg="$PGDATA" -j >c2.json 2>c2.err &
	pid=$!
	for i in $(seq 1 200); do grep -q "^tracing" c2.err && break; sleep 0.05; done &&
	grep -q "^tracing" c2.err &&
	python3 "$TEST_LIB"/probesites.py $PG_PID >attached.json &&
	json_py "assert d[\"changed\"], d; assert d[\"semaphores\"][\"postgresql:transaction__start\"] == 1, d" <attached.json &&
	bpf_objs_of $pid >objs.attached &&
	grep -q "^link " objs.attached &&
	kill -INT $pid && kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	# 0: the release was over before the second one came; 130: it cut the wait short
	{ test $rc = 0 || test $rc = 130; } &&
	json_py "assert d[\"report\"] == \"summary\"" <c2.json &&
	for i in $(seq 1 200); do
		test "$(live_named "$(basename "$KBIN")")" = 0 && break
		sleep 0.05
	done &&
	test "$(live_named "$(basename "$KBIN")")" = 0 &&
	bpf_objs_gone objs.attached &&
	python3 "$TEST_LIB"/probesites.py $PG_PID $(cat /proc/$PG_PID/task/$PG_PID/children) >after.json &&
	json_py "
live = [l for l in lines if \"gone\" not in l]
assert live and live[0][\"pid\"] == $PG_PID, lines
for l in live:
    assert not l[\"changed\"] and not any(l[\"semaphores\"].values()), l
" <after.json
'

test_expect_success "$CYCLES attach/detach cycles under pgbench: no failed transaction" '
	load_start cycles.log &&
	n=0 &&
	while [ $n -lt $CYCLES ]; do
		case $((n % 4)) in
		0) "$KBIN" count "usdt:postgresql:*" --pg="$PGDATA" -j -d 0.05 ;;
		1) "$KBIN" tps --pg="$PGDATA" -j -d 0.05 ;;
		2) "$KBIN" latency query --pg="$PGDATA" -j -d 0.05 ;;
		3) "$KBIN" stat --per query -e task-clock --pg="$PGDATA" -j -d 0.05 ;;
		esac >cycle.json 2>cycle.err || { cat cycle.err; break; }
		n=$((n + 1))
	done &&
	load_stop cycles.log &&
	test $n = $CYCLES &&
	cat cycles.log &&
	runs=$(grep -c "^exit status" cycles.log) &&
	test $runs -ge 1 &&
	test $(grep -c "^exit status 0$" cycles.log) = $runs &&
	test $(grep -c "^number of failed transactions: 0 " cycles.log) = $runs &&
	! grep -E "terminated by signal|was terminated|PANIC" "$TRASH/main/server.log"
'

test_expect_success 'a watchpoint and uprobes on the same backend: both count every XID' '
	"$KBIN" watch xid --by pid --pg="$PGDATA" -j >w.json 2>w.err &
	wpid=$!
	"$KBIN" count "uprobe:$BIN:GetNewTransactionId" --by pid --pg="$PGDATA" -j >u.json 2>u.err &
	upid=$!
	for i in $(seq 1 200); do
		grep -q "^watching" w.err && grep -q "^tracing" u.err && break
		sleep 0.05
	done &&
	grep -q "^watching" w.err && grep -q "^tracing" u.err &&
	{ echo "select pg_backend_pid();" &&
	  for i in $(seq 1 200); do echo "begin; select txid_current(); commit;"; done; } |
		psql -XAtq >xids &&
	kill -INT $wpid $upid && wait $wpid && wait $upid &&
	backend=$(head -n1 xids) &&
	test $(wc -l <xids) = 201 &&
	json_py "
w = [l for l in lines if l[\"report\"] == \"summary\"][0]
n = [p[\"writes\"] for p in w[\"processes\"] if p[\"pid\"] == $backend]
assert n == [200], w
" <w.json &&
	json_py "
u = [l for l in lines if l[\"report\"] == \"summary\"][0]
n = [p[\"hits\"] for p in u[\"probes\"][0][\"processes\"] if p[\"pid\"] == $backend]
assert n == [200], u
" <u.json &&
	! grep -E "terminated by signal|was terminated|PANIC" "$TRASH/main/server.log"
'

test_done
