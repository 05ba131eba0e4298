#!/bin/bash
test_description='dbtap stat: counting per process and thread, against /proc and a workload'"'"'s own count'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/stat.sh

test_expect_success 'task-clock agrees with /proc/PID/schedstat over the same window' '
	wl_start spin spin &&
	t0=$(date +%s%N) && s0=$(schedstat $wl_pid) &&
	dbtap -j stat -e task-clock,cpu-clock -p $wl_pid -d 1 >tc.json &&
	s1=$(schedstat $wl_pid) && t1=$(date +%s%N) &&
	json_py "
tc = d[\"events\"][\"task-clock\"][\"value_ns\"]
ran = $s1 - $s0                          # what the kernel says the process ran
outside = ($t1 - $t0) - d[\"duration_s\"] * 1e9 # wall time between the reads, outside the window
tick = 10e6                              # schedstat of a running task lags by up to a tick
assert d[\"events\"][\"task-clock\"][\"counted\"] and tc > 0, d
assert tc <= ran + tick, (tc, ran)
assert tc >= ran - outside - tick, (tc, ran, outside)
assert d[\"metrics\"][\"cpus_utilized\"] > 0, d
" <tc.json &&
	kill $wl_pid
'

# perf::page-faults is not a generic name: libpfm4 (loaded on demand) encodes it.
test_expect_success 'a workload touching K fresh pages: page-faults >= K, and close' '
	wl_start pt 3000 &&
	stat_start pf.json -e page-faults,minor-faults,major-faults,perf::page-faults -p $wl_pid &&
	kill -USR1 $wl_pid &&
	wait_for_line pt.out "^touched" &&
	stat_stop &&
	k=$(sed -n "s/^touched //p" pt.out) &&
	json_py "
k = $k
ev = d[\"events\"]
pf, minor, major = (ev[n][\"value\"] for n in (\"page-faults\", \"minor-faults\", \"major-faults\"))
assert d[\"report\"] == \"summary\", d
assert k == 3000 and k <= pf <= k + 64, (k, pf)
assert pf == minor + major and minor >= k, ev
assert k <= ev[\"perf::page-faults\"][\"value\"] <= k + 64, ev
" <pf.json &&
	kill $wl_pid
'

test_expect_success '--by tid: one row per thread, faults on the thread that took them' '
	wl_start pt2 500 &&
	stat_start th.json --by tid -e page-faults -p $wl_pid &&
	kill -USR1 $wl_pid &&
	wait_for_line pt2.out "^touched" &&
	stat_stop &&
	json_py "
assert len(lines) == 1 and d[\"report\"] == \"summary\", lines
th = d[\"processes\"]
# its one thread is the process itself: no tid key (docs/json.md)
assert len(th) == 1 and th[0][\"pid\"] == $wl_pid and \"tid\" not in th[0], th
assert th[0][\"type\"] == \"pagetouch\" and th[0][\"exited\"] is False, th
assert 500 <= th[0][\"events\"][\"page-faults\"][\"value\"] <= 564, th
" <th.json &&
	kill $wl_pid
'

test_expect_success 'interval reports add up to the total' '
	wl_start pt3 2000 &&
	stat_start iv.json -e page-faults -p $wl_pid -i 0.1 &&
	kill -USR1 $wl_pid &&
	wait_for_line pt3.out "^touched" &&
	sleep 0.3 &&
	stat_stop &&
	json_py "
iv = [l[\"events\"][\"page-faults\"][\"value\"] for l in lines if l[\"report\"] == \"interval\"]
tot = [l for l in lines if l[\"report\"] == \"summary\"]
assert len(iv) >= 2 and len(tot) == 1, lines
# the last, partial interval is printed too: the intervals add up to the summary (the
# workload waits for a signal after touching its pages, so nothing faults in between)
assert sum(iv) == tot[0][\"events\"][\"page-faults\"][\"value\"], (iv, tot)
ivs = sum(l[\"interval_s\"] for l in lines if l[\"report\"] == \"interval\")
assert abs(ivs - tot[0][\"duration_s\"]) < 1e-5, (ivs, tot)
assert 2000 <= tot[0][\"events\"][\"page-faults\"][\"value\"] <= 2064, tot
" <iv.json &&
	kill $wl_pid
'

	test_expect_success !PMU 'no PMU: hardware events are "not supported on this machine", never 0' '
		wl_start hw spin &&
		dbtap -j stat -e task-clock,instructions,cycles:u,L1-dcache-load-misses -p $wl_pid \
			-d 0.3 >hw.json 2>hw.err &&
		json_py "
ev = d[\"events\"]
for n in (\"instructions\", \"cycles:u\", \"L1-dcache-load-misses\"):
    assert ev[n][\"counted\"] is False and ev[n][\"value\"] is None, ev[n]
    assert ev[n][\"reason\"] == \"not supported on this machine\", ev[n]
assert ev[\"task-clock\"][\"counted\"] and ev[\"task-clock\"][\"value_ns\"] > 0, ev
assert d[\"metrics\"][\"ipc\"] is None, d
" <hw.json &&
		test_grep "warning: event .instructions.: not supported on this machine" hw.err &&
		test_grep "hint: the kernel exposes no hardware PMU" hw.err &&
		test_expect_code 1 dbtap stat -e instructions -p $wl_pid -d 0.2 >only.out 2>only.err &&
		test_grep "error: event .instructions.: not supported on this machine" only.err &&
		! test -s only.out &&
		kill $wl_pid
	'

test_expect_success 'bad input: unknown events with suggestions, bad modifiers, targets' '
	test_expect_code 2 dbtap stat -e instrutcions -p $$ 2>e1 &&
	test_grep "error: unknown event .instrutcions." e1 &&
	test_grep "hint: did you mean: instructions" e1 &&
	test_expect_code 2 dbtap stat -e page-fault -p $$ 2>e2 &&
	test_grep "did you mean: page-faults" e2 &&
	test_expect_code 2 dbtap stat -e task-clock:x -p $$ 2>e3 &&
	test_grep "bad modifier .x." e3 &&
	test_expect_code 2 dbtap stat -e task-clock,,page-faults -p $$ 2>e4 &&
	test_grep "empty event name" e4 &&
	dbtap stat -e task-clock,page-faults -p $$ -d 0.2 >o4a 2>e4a &&
	test_grep "performance counter stats for .*/sec is per wall-clock second" o4a &&
	test_expect_code 2 dbtap stat -e "" -p $$ -d 0.2 >o4b 2>e4b &&
	test_grep "^error: -e .*no event named" e4b &&
	test_grep "^hint: " e4b &&
	test_must_be_empty o4b &&
	test_expect_code 2 dbtap stat -p $$ --per statement 2>e5 &&
	test_grep "unknown --per value .statement." e5 &&
	test_expect_code 2 dbtap stat -p $$ --by statement 2>e5b &&
	test_grep "^error: bad --by .statement." e5b &&
	test_grep "^hint: --by pid|tid|type|database|user|query|transaction" e5b &&
	test_expect_code 2 dbtap stat -p $$ --by pid --compare pid:$$ 2>e5c &&
	test_grep "not --by pid" e5c &&
	{ dbtap stat -e task-clock -d 0.2 >o6 2>e6; echo $? >rc6; } &&
	{ dbtap stat --pg -e task-clock -d 0.2 >o6pg 2>e6pg; echo $? >rc6pg; } &&
	test_cmp rc6pg rc6 &&
	grep "^counting\|^error" e6 >n6 &&
	grep "^counting\|^error" e6pg >n6pg &&
	test_cmp n6pg n6 &&
	test_expect_code 1 dbtap stat -p 999999999 2>e7 &&
	test_grep "hint:" e7 &&
	test_expect_code 2 dbtap stat -p $$ -d x 2>e8 &&
	test_grep "bad duration .x." e8 &&
	test_expect_code 2 dbtap stat -p $$ --compare nonsense 2>e9 &&
	test_grep "cannot compare with .nonsense." e9
'

test_expect_success 'SIGTERM ends the run like Ctrl-C: the final report, exit 0' '
	wl_start term 200 &&
	stat_start term.json -e page-faults -p $wl_pid &&
	kill -USR1 $wl_pid && wait_for_line term.out "^touched" &&
	kill -TERM $stat_pid &&
	wait $stat_pid &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\" and 200 <= d[\"events\"][\"page-faults\"][\"value\"] <= 264, d" <term.json &&
	kill $wl_pid
'

test_expect_success 'a process that exits: counts up to its exit, then the report' '
	"$WORKLOADS/pagetouch" 400 >ex.out &
	ex_pid=$! &&
	wait_for_line ex.out "^ready" &&
	stat_start ex.json -e page-faults -p $ex_pid -d 30 &&
	kill -USR1 $ex_pid &&
	wait_for_line ex.out "^touched" &&
	kill $ex_pid &&
	wait $stat_pid &&
	test_grep "has exited" ex.json.err &&
	json_py "
assert d[\"report\"] == \"summary\" and 400 <= d[\"events\"][\"page-faults\"][\"value\"] <= 464, d
assert d[\"duration_s\"] < 30 and d[\"end\"] == \"target exited\", d
" <ex.json
'

test_expect_success '-t: a thread that exits ends the run with its counts' '
	"$WORKLOADS/pagetouch" 300 >tx.out &
	tx_pid=$! &&
	wait_for_line tx.out "^ready" &&
	stat_start tx.json -e page-faults -t $tx_pid -d 30 &&
	kill -USR1 $tx_pid &&
	wait_for_line tx.out "^touched" &&
	kill $tx_pid &&
	wait $stat_pid &&
	test_grep "thread $tx_pid of pid $tx_pid has exited" tx.json.err &&
	json_py "assert 300 <= d[\"events\"][\"page-faults\"][\"value\"] <= 364, d" <tx.json
'

test_expect_success 'an unprivileged user: kernel counts refused with the paranoid hint, :u works' '
	runuser -u nobody -- sleep 30 &
	ru=$! &&
	test_atexit "kill $ru" &&
	for i in $(seq 1 50); do np=$(pgrep -P $ru sleep) && break; sleep 0.05; done &&
	test -n "$np" &&
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid) &&
	if [ "$paranoid" -ge 2 ]; then
		test_expect_code 1 dbtap_as nobody stat -e task-clock -p $np -d 0.1 2>np.err &&
		test_grep "error: event .task-clock.: permission denied" np.err &&
		test_grep "hint: kernel.perf_event_paranoid is $paranoid: without privileges only user space" np.err
	fi &&
	dbtap_as nobody -j stat -e task-clock:u,page-faults:u -p $np -d 0.1 >npu.json &&
	json_py "assert d[\"events\"][\"page-faults:u\"][\"counted\"], d" <npu.json &&
	kill $ru
'

test_expect_success '--by query (and its older spelling --per query) on a program without USDT probes says so' '
	wl_start nousdt spin &&
	test_expect_code 1 dbtap stat --by query -e task-clock -p $wl_pid -d 1 2>nu.err &&
	test_grep "has no USDT probe postgresql:query__start" nu.err &&
	test_grep "hint: the binary has no USDT probes at all: --by query" nu.err &&
	test_expect_code 1 dbtap stat --per query -e task-clock -p $wl_pid -d 1 2>nu2.err &&
	test_cmp nu.err nu2.err &&
	kill $wl_pid
'

test_done
