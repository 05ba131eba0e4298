#!/bin/bash
test_description='dbtap wait: every backend time accounted under a mixed pgbench run; CPU as the kernel counts it'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

SESSIONS=3

# Sessions that stay connected: each psql reads its statements from a FIFO, so the test
# can read its backend's /proc/PID/schedstat while it sits idle before and after.
session_start() {
	mkfifo in$1 &&
	{ psql -XAtq <in$1 >out$1 2>&1 & } &&
	exec {fd}>in$1 &&
	eval "SESSION_FD_$1=$fd" &&
	echo "select pg_backend_pid();" >&$fd &&
	for i in $(seq 1 100); do test -s out$1 && break; sleep 0.05; done &&
	test -s out$1
}

session_send() {
	local fd
	eval "fd=\$SESSION_FD_$1"
	echo "$2" >&$fd
}

schedstat_cpu() {
	cut -d" " -f1 /proc/$1/schedstat
}

test_expect_success 'set up a cluster, pgbench tables, three sessions' '
	pg_start pg "autovacuum = off" &&
	pgbench -i -s 1 -q >init.log 2>&1 &&
	for s in $(seq 1 $SESSIONS); do session_start $s || return 1; done &&
	for s in $(seq 1 $SESSIONS); do
		eval "pid$s=\$(sed -n 1p out$s)" || return 1
	done
'

# CPU is the kernel's count (sum_exec_runtime, as schedstat shows it), read at each
# switch: wall-clock time on CPU would also hold what the hypervisor gave another guest
# (steal), which the kernel leaves out. schedstat is read while dbtap is attached and
# the sessions sit idle, so both cover the same stretch of the sessions' lives.
test_expect_success 'mixed run: per backend CPU + waits + unlabelled = wall within 1 %, CPU = schedstat within 2 %' '
	trace_start w1.json wait --pg="$PGDATA" -j --by pid --top 1000 &&
	for s in $(seq 1 $SESSIONS); do
		eval "cpu0_$s=\$(schedstat_cpu \$pid$s)" || return 1
	done &&
	for s in $(seq 1 $SESSIONS); do
		session_send $s "select count(*) from generate_series(1, 2000000);" &&
		session_send $s "begin; update pgbench_branches set bbalance = bbalance + 1 where bid = 1; select pg_sleep(0.2); commit;" &&
		session_send $s "select sum(abalance) from pgbench_accounts;" &&
		session_send $s "select pg_sleep(0.1);" &&
		session_send $s "\\! touch done$s" || return 1
	done &&
	pgbench -c 4 -j 2 -T 3 -n >bench.out 2>&1 &&
	for s in $(seq 1 $SESSIONS); do
		for i in $(seq 1 200); do test -f done$s && break; sleep 0.05; done
		test -f done$s || return 1
	done &&
	sleep 0.3 &&
	for s in $(seq 1 $SESSIONS); do
		eval "cpu1_$s=\$(schedstat_cpu \$pid$s)" || return 1
	done &&
	trace_stop &&
	json_py "
dur = d[\"duration_s\"] * 1e9
procs = {p[\"pid\"]: p for p in d[\"processes\"]}
kinds = (\"cpu_ns\", \"wait_ns\", \"idle_ns\", \"runnable_ns\", \"unlabelled_ns\", \"unreadable_ns\")
backends = [p for p in procs.values() if p[\"type\"] == \"client backend\"]
# the three sessions, and pgbench four clients forked and ended within the run
assert len(backends) >= $SESSIONS + 4, [(p[\"pid\"], p[\"type\"]) for p in procs.values()]
for p in procs.values():
    parts = sum(p[k] for k in kinds)
    assert abs(parts - p[\"wall_ns\"]) <= 0.01 * p[\"wall_ns\"], p
ends = [p for p in backends if p[\"exited\"]]
assert len(ends) >= 4, ends
for s, c0, c1 in (($pid1, $cpu0_1, $cpu1_1), ($pid2, $cpu0_2, $cpu1_2), ($pid3, $cpu0_3, $cpu1_3)):
    p = procs[s]
    # alive and traced the whole run: its wall time is the run itself
    assert not p[\"exited\"] and abs(p[\"wall_ns\"] - dur) <= 0.01 * dur, (p, dur)
    cpu = c1 - c0
    assert cpu > 1e8, (s, cpu)  # the series ran: something to compare
    assert abs(p[\"cpu_ns\"] - cpu) <= 0.02 * cpu, (s, p[\"cpu_ns\"], cpu)
    waits = {(w[\"wait_event_type\"], w[\"wait_event\"]): w for w in p[\"waits\"]}
    assert (\"Timeout\", \"PgSleep\") in waits and waits[(\"Timeout\", \"PgSleep\")][\"count\"] >= 2, waits.keys()
assert d[\"dropped\"] == {\"aggregates_full\": 0, \"threads_full\": 0, \"texts_full\": 0}, d[\"dropped\"]
" <w1.json
'

test_expect_success 'a backend killed in the middle of a wait is counted up to its exit' '
	{ psql -XAtq -c "select pg_backend_pid()" -c "select pg_sleep(30)" >k.out 2>&1 & } &&
	for i in $(seq 1 100); do test -s k.out && break; sleep 0.05; done &&
	kpid=$(sed -n 1p k.out) &&
	trace_start w2.json wait --pg="$PGDATA" -j --by pid &&
	sleep 1 &&
	t0=$(date +%s.%N) &&
	kill -KILL $kpid &&
	while kill -0 $kpid 2>/dev/null; do sleep 0.01; done &&
	t1=$(date +%s.%N) &&
	sleep 0.5 &&
	trace_stop &&
	json_py "
p = [g for g in d[\"processes\"] if g[\"pid\"] == $kpid]
assert len(p) == 1, [g[\"pid\"] for g in d[\"processes\"]]
p = p[0]
assert p[\"exited\"], p
sl = [w for w in p[\"waits\"] if w[\"wait_event\"] == \"PgSleep\"]
assert len(sl) == 1, p[\"waits\"]
# from the start of tracing to the kill: at least the second slept, not the 30 s asked
assert 1.0 <= sl[0][\"wait_s\"] < 0.5 + d[\"duration_s\"], (sl, d[\"duration_s\"])
# it stops being accounted at its exit, not at the end of the run
assert p[\"wall_ns\"] < d[\"duration_s\"] * 1e9 - 0.4e9, (p, d[\"duration_s\"])
" <w2.json
'

test_expect_success 'close the sessions' '
	for s in $(seq 1 $SESSIONS); do
		eval "fd=\$SESSION_FD_$s" && eval "exec $fd>&-" || return 1
	done
'

test_done
