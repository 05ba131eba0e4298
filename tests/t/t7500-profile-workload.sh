#!/bin/bash
test_description='dbtap profile: stacks, shares and sample counts against a workload'"'"'s known profile'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

[ -x "$WORKLOADS/profloop" ] || test_bail "$WORKLOADS/profloop is not built: run make"

test_expect_success 'f_a x3 / f_b: 75/25 within 3 points, every stack main -> loop -> f_a or f_b' '
	profloop_start pl1.out &&
	pid=$PL_PID &&
	dbtap profile -p $PL_PID -F 999 -d 4 --user --folded >p1.folded 2>p1.err &&
	dbtap profile -p $PL_PID -F 999 -d 1 -j --user >p1.json 2>>p1.err &&
	profloop_stop &&
	folded_py "
total = sum(c for _, c in stacks)
assert total > 500, total
by = {}
for frames, c in stacks:
    # the root is the command name; from main on the chain is exact; below main only
    # the C library start code (which keeps no frame pointer) may appear
    assert frames[0] == \"profloop\", frames
    # loop itself runs a few instructions between the calls (its counters): a sample
    # there, rare, is main -> loop; any other shape fails
    i = frames.index(\"main\")
    assert frames[i:] == [\"main\", \"loop\"] or (frames[i:-1] == [\"main\", \"loop\"] and
                                              frames[-1] in (\"f_a\", \"f_b\")), frames
    assert all(f.startswith(\"__libc_start\") for f in frames[1:i]), frames
    by[frames[-1]] = by.get(frames[-1], 0) + c
assert by.get(\"loop\", 0) <= total // 100, by
share = by[\"f_a\"] / (by[\"f_a\"] + by[\"f_b\"])
print(by, share)
assert abs(share - 0.75) <= 0.03, share
" <p1.folded &&
	json_py "
assert d[\"report\"] == \"summary\" and d[\"lost\"][\"total\"] == 0, d
assert [t[\"type\"] for t in d[\"types\"]] == [\"profloop\"], d
assert d[\"processes\"] == [{\"pid\": $pid, \"type\": \"profloop\", \"user\": None, \"database\": None,
                            \"samples\": d[\"samples\"]}], d
# by self share first (the default --sort)
assert [x[\"name\"] for x in d[\"types\"][0][\"functions\"][:2]] == [\"f_a\", \"f_b\"], d
f = {x[\"name\"]: x for x in d[\"types\"][0][\"functions\"]}
assert f[\"main\"][\"total\"] == d[\"samples\"], f
in_loop = f[\"loop\"][\"self\"] if \"loop\" in f else 0
assert f[\"f_a\"][\"self\"] + f[\"f_b\"][\"self\"] + in_loop == d[\"samples\"], f
assert in_loop <= d[\"samples\"] // 100, f
assert abs(f[\"f_a\"][\"self_pct\"] - 75) <= 6, f
" <p1.json
'

# -p samples on an event bound to each thread, whose timer runs only while the thread
# is on a CPU: samples are HZ x its CPU time to one period, loaded machine or not.
test_expect_success 'samples = HZ x the target'"'"'s CPU time (schedstat) within 5 %' '
	profloop_start pl2.out -w -s 2 &&
	trace_start p2.json profile -p $PL_PID -F 401 -j &&
	cpu0=$(schedstat_ns $PL_PID) &&
	kill -USR1 $PL_PID &&
	for i in $(seq 1 600); do grep -q "^done" pl2.out && break; sleep 0.1; done &&
	test_grep "^done" pl2.out &&
	cpu1=$(schedstat_ns $PL_PID) &&
	trace_stop &&
	profloop_stop &&
	json_py "
cpu = ($cpu1 - $cpu0) / 1e9
want = 401 * cpu
print(d[\"samples\"], want, cpu)
assert cpu > 0.5, cpu
assert abs(d[\"samples\"] - want) <= 0.05 * want, (d[\"samples\"], want)
assert d[\"lost\"][\"total\"] == 0, d
" <p2.json
'

test_expect_success 'threads created after dbtap attached: each HZ x its CPU time (schedstat) within 5 %' '
	# two threads created on SIGUSR1, which run one second each, then sleep
	profloop_start pl9.out -w -n -s 1 &&
	pid=$PL_PID &&
	trace_start p9.json profile -p $pid -F 401 --by thread -j &&
	kill -USR1 $pid &&
	for i in $(seq 1 600); do grep -q "^done" pl9.out && break; sleep 0.1; done &&
	test_grep "^done" pl9.out &&
	for t in /proc/$pid/task/*; do
		echo "${t##*/} $(cut -d" " -f1 $t/schedstat) $(cat $t/comm)" || return 1
	done >cpu9 &&
	trace_stop &&
	profloop_stop &&
	json_py "
cpu = {}
for line in open(\"cpu9\"):
    tid, ns, comm = line.split()
    cpu[int(tid)] = (int(ns) / 1e9, comm)
got = {p.get(\"tid\", $pid): p[\"samples\"] for p in d[\"processes\"]}
print(got, cpu)
for tid, (secs, comm) in cpu.items():
    if comm not in (\"pl-alpha\", \"pl-beta\"):
        continue
    want = 401 * secs
    # created after dbtap attached: all of their CPU time is inside the profile
    assert secs > 0.2, (comm, secs)
    assert abs(got.get(tid, 0) - want) <= 0.05 * want, (comm, got.get(tid), want)
assert sum(got.values()) == d[\"samples\"] and d[\"lost\"][\"total\"] == 0, d
" <p9.json
'

test_expect_success 'samples on a function'"'"'s prologue or epilogue keep its caller' '
	# f_short is push, mov, add, pop, ret: most of its samples land where the
	# frame-pointer chain skips loop_short; the program puts it back from [sp]
	profloop_start plt.out -t &&
	dbtap profile -p $PL_PID -F 999 -d 2 --user --folded >pt.folded 2>pt.err &&
	dbtap profile -p $PL_PID -F 999 -d 1 --user -j >pt.json 2>>pt.err &&
	profloop_stop &&
	folded_py "
n = 0
for frames, c in stacks:
    i = frames.index(\"main\")
    assert frames[i:] in ([\"main\", \"loop_short\"], [\"main\", \"loop_short\", \"f_short\"]), frames
    n += c if frames[-1] == \"f_short\" else 0
assert n > 100, n
" <pt.folded &&
	json_py "
assert 0 < d[\"entry_callers_restored\"] <= d[\"samples\"], d
" <pt.json
'

test_expect_success 'a stack deeper than the unwinder takes is marked [truncated], and counted' '
	profloop_start pl3.out -r 300 &&
	dbtap profile -p $PL_PID -d 2 --user -o p3.folded -j >p3.json 2>p3.err &&
	profloop_stop &&
	json_py "
assert d[\"truncated\"] == d[\"samples\"] > 0, d
" <p3.json &&
	folded_py "
assert stacks
for frames, c in stacks:
    assert frames[1] == \"[truncated]\", frames[:3]
    assert len(frames) == 2 + 127, len(frames)
    assert frames[-1] in (\"f_a\", \"f_b\"), frames[-3:]
    assert set(frames[2:-2]) == {\"deep\"}, set(frames[2:-2])
" <p3.folded
'

test_expect_success 'the target exiting during the profile: the report still comes, the exit is said' '
	# the loop starts once dbtap is attached (which takes seconds on a loaded machine)
	profloop_start pl4.out -w -s 1 &&
	pid=$PL_PID &&
	trace_start p4.json profile -p $pid -j &&
	kill -USR1 $pid &&
	for i in $(seq 1 600); do grep -q "^done" pl4.out && break; sleep 0.1; done &&
	test_grep "^done" pl4.out &&
	kill $pid &&
	trace_wait &&
	test_grep "exited; stopping" p4.json.err &&
	json_py "
assert d[\"report\"] == \"summary\" and d[\"end\"] == \"target exited\", d
f = {x[\"name\"]: x for x in d[\"types\"][0][\"functions\"]}
assert \"f_a\" in f and \"main\" in f, f
" <p4.json &&
	test_expect_code 1 dbtap profile -p $pid -d 1 2>p4b.err &&
	test_grep "^error: " p4b.err
'

# A thread that runs only in user space is still sampled in the kernel now and then: in
# an interrupt, a softirq run on its time, on the way back from a preemption. Those
# samples have the same user chain, then kernel frames (kernel_frames of them), each a
# name /proc/kallsyms has.
test_expect_success '--by thread: each thread with its name; -t TID: that thread alone' '
	profloop_start pl6.out -n &&
	pid=$PL_PID &&
	sleep 0.2 &&
	# 499 Hz: the threads keep their priority, and each thread gets HZ x its CPU time,
	# which on a loaded machine is a few per cent of a CPU
	dbtap profile -p $pid -F 499 -d 2 --by thread -j >p6.json 2>p6.err &&
	for t in /proc/$pid/task/*; do echo "${t##*/} $(cat $t/comm)"; done >comms &&
	alpha=$(awk "\$2 == \"pl-alpha\" { print \$1 }" comms) &&
	dbtap profile -t $alpha -F 499 -d 1 --events -j >p7.json 2>p7.err &&
	profloop_stop &&
	json_py "
threads = {p[\"thread\"]: p for p in d[\"processes\"]}
assert set(threads) == {\"pl-alpha\", \"pl-beta\"}, threads.keys()
for name, p in threads.items():
    assert p[\"pid\"] == $pid and p[\"tid\"] != $pid and p[\"type\"] == \"profloop\", p
    assert p[\"samples\"] > 10, p
    assert \"%d %s\" % (p[\"tid\"], name) in open(\"comms\").read().splitlines(), p
assert sum(p[\"samples\"] for p in d[\"processes\"]) == d[\"samples\"], d
" <p6.json &&
	json_py "
ev = [l for l in lines if l[\"report\"] == \"event\"]
s = lines[-1]
assert s[\"report\"] == \"summary\" and len(ev) == s[\"samples\"] > 0, (len(ev), s)
assert s[\"events_dropped\"] == 0, s
assert all(e[\"pid\"] == $pid and e[\"tid\"] == $alpha for e in ev), ev[:2]
ksyms = set(l.split()[2] for l in open(\"/proc/kallsyms\"))
for e in ev:
    k = e[\"kernel_frames\"]
    user, kern = e[\"stack\"][:len(e[\"stack\"]) - k], e[\"stack\"][len(e[\"stack\"]) - k:]
    # the thread start code of the C library keeps no frame pointer: only it may be above
    i = user.index(\"thread_main\")
    assert user[i:] in ([\"thread_main\", \"loop\", \"f_a\"], [\"thread_main\", \"loop\", \"f_b\"]), e
    assert all(f in (\"start_thread\", \"clone\", \"clone3\") for f in user[:i]), e
    assert all(f in ksyms for f in kern), e
print(sum(1 for e in ev if e[\"kernel_frames\"]), \"of\", len(ev), \"samples in the kernel\")
t = [e[\"time_s\"] for e in ev]
assert t == sorted(t) and 0 <= t[0] and t[-1] <= s[\"duration_s\"], t
" <p7.json
'

test_expect_success '--sort total: the functions every stack holds first, then those of the self ranking' '
	profloop_start pl8.out &&
	dbtap profile -p $PL_PID -F 499 -d 1 --user --top 3 --sort total -j >p8.json 2>p8.err &&
	dbtap profile -p $PL_PID -F 499 -d 1 --user --top 3 --sort total >p8.txt 2>>p8.err &&
	profloop_stop &&
	json_py "
f = d[\"types\"][0][\"functions\"]
n = d[\"samples\"]
# main, loop and the start code below main are in every stack
assert n > 0 and [x[\"total\"] for x in f[:3]] == [n, n, n], f
assert {\"main\", \"loop\"} <= {x[\"name\"] for x in f[:3]}, f
# then the top of the self ranking not listed yet
assert [x[\"name\"] for x in f[3:]] == [\"f_a\", \"f_b\"], f
" <p8.json &&
	grep "self%" p8.txt >heads &&
	test "$(sed "s/.*  //" heads)" = "$(printf "function (by total)\nfunction")"
'

test_expect_success 'text report: self and total tables, frame pointers said' '
	profloop_start pl5.out &&
	dbtap profile -p $PL_PID -d 1 >p5.txt 2>p5.err &&
	profloop_stop &&
	test_grep "^total over [0-9.]* s: [0-9]* samples of cpu-clock at 99 Hz" p5.txt &&
	test_grep "^  profloop: [0-9]* samples" p5.txt &&
	test_grep "f_a$" p5.txt &&
	test_grep "function (by total)" p5.txt &&
	test_grep "^lost 0 samples" p5.txt &&
	awk "length > 99 { exit 1 }" p5.txt
'

test_done
