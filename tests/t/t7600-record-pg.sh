#!/bin/bash
test_description='dbtap record: one capture of a known slowdown, its window and profile; waits in a capture; the cooldown; fixed memory'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/pgcopy.sh # a server binary of its own: its USDT semaphores are ours alone
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/bpfobj.sh
. "$TEST_LIB"/profile.sh
. "$TEST_LIB"/record.sh

pg_start || test_bail "cannot start a test cluster"
pgbench -i -q -s 1 >init.log 2>&1 || test_bail "pgbench -i failed"

# LONG=1: the memory check runs 5 minutes at 99 Hz instead of the steady part alone.
steady=10
[ -n "$LONG" ] && steady=300

# The trigger: the cluster's CPU over 15 %, or over 1.5 CPUs' worth where there are more
# than 10 (four heavy clients use at most four CPUs of them).
cpu_pct=$(python3 -c "import os; print(min(15, round(150 / os.cpu_count(), 1)))")
trig="cpu>$cpu_pct% for 2s"

# The share of samples whose stack holds fn, in a capture's folded stacks.
share_py='
import sys
fn, path = sys.argv[1], sys.argv[2]
n = hit = 0
for l in open(path):
    frames, _, c = l.rstrip("\n").rpartition(" ")
    n += int(c)
    if fn in frames.split(";"):
        hit += int(c)
print("%.4f %d" % (hit / n if n else 0, n))
'

# Two sleeps of one backend, each between two readings of the server's own clock.
sleeps_sql="SELECT 'sl', pg_backend_pid(), extract(epoch from clock_timestamp()), length(pg_sleep(0.3)::text), extract(epoch from clock_timestamp())"

# The heavy clients run until the test has seen what it waits for, then stop: the trigger
# gets as many seconds as the machine needs for its 'for 2s', and no more is spent.
test_expect_success 'steady pgbench, SIGUSR2, then 4 clients on a CPU-heavy statement: one capture holding the onset' '
	pgbench -n -c 2 -j 1 -R 50 -T $((steady + 60)) >bench.log 2>&1 &
	bench=$! &&
	test_when_finished "kill $bench 2>/dev/null" &&
	trace_start rec.json -v record --pg "$PGDATA" --keep 20s --post 2s --cooldown 120s \
		--trigger "$trig" --max-mem 32M -o caps -j &&
	bpf_objs_of $TRACE_PID >objs &&
	sleep $steady &&
	# at the end of the steady part: inside the --keep window of the SIGUSR2 capture
	psql -XAtq -F " " -c "$sleeps_sql" -c "$sleeps_sql" >sl.out &&
	kill -USR2 $TRACE_PID &&
	wait_line rec.json "d[\"report\"] == \"capture\" and d[\"trigger\"] == \"SIGUSR2\"" &&
	onset=$(date +%s.%N) &&
	heavy_start 60 &&
	wait_line rec.json "d[\"report\"] == \"capture\" and d[\"trigger\"] != \"SIGUSR2\"" 30 &&
	heavy_kill &&
	wait_below rec.json.err $cpu_pct &&
	heavy_start 60 &&
	wait_line rec.json "d[\"report\"] == \"trigger\" and d.get(\"why_not\") == \"cooldown\"" 30 &&
	heavy_kill &&
	rss=$(rss_peak_kb $TRACE_PID) &&
	trace_stop TERM &&
	bpf_objs_gone objs &&
	echo "$onset $rss $cpu_pct" >facts &&
	json_py "
onset, rss, pct = open(\"facts\").read().split()
lines = [__import__(\"json\").loads(l) for l in open(\"rec.json\")]
caps = [l for l in lines if l[\"report\"] == \"capture\"]
auto = [c for c in caps if c[\"trigger\"] != \"SIGUSR2\"]
assert len(auto) == 1 and len(caps) == 2, caps
c = auto[0]
s = __import__(\"json\").load(open(c[\"path\"] + \"/summary.json\"))
o = float(onset) - s[\"start_realtime_s\"]
assert s[\"window\"][\"start_s\"] <= o <= s[\"window\"][\"end_s\"], (o, s[\"window\"])
assert s[\"onset_s\"] >= o - 1.5, (s[\"onset_s\"], o)
assert s[\"trigger\"] == \"cpu>%s%% for 2s\" % pct and s[\"value\"] > float(pct), s
assert s[\"during\"][\"cpu_pct\"] > s[\"before\"][\"cpu_pct\"], s
# the markers read at the switch-outs (15, 16), the transactions of pgbench among them
assert s[\"markers_from\"] == d[\"markers_from\"] == \"PgBackendStatus\", s
assert s[\"before\"][\"transactions\"] > 0 and s[\"before\"][\"statements\"] > 0, s
# the second slowdown fired inside the cooldown, and made no capture
fired = [l for l in lines if l[\"report\"] == \"trigger\" and l.get(\"why_not\") == \"cooldown\"]
assert fired and all(l[\"time_s\"] > c[\"time_s\"] for l in fired), fired
assert d[\"report\"] == \"summary\" and d[\"captures\"] == 2, d
assert d[\"kept_bytes\"] <= 32 << 20, d
assert d[\"waits\"] >= 2 and d[\"lost\"][\"waits_ring_full\"] == 0, d
assert int(rss) < (32 + 16) * 1024, (\"peak RSS over --max-mem + 16 MB\", rss)
print(\"peak rss kB\", rss, \"onset\", o, s[\"window\"])
" <rec.json
'

test_expect_success 'the steady capture holds the two sleeps of a backend: Timeout:PgSleep waits and their statements at the times it recorded' '
	sig=$(ls -d caps/*-signal) &&
	python3 - $sig <<-\PY
	import gzip, json, sys
	d = sys.argv[1]
	s = json.load(open(d + "/summary.json"))
	rec = [l.split() for l in open("sl.out") if l.startswith("sl ")]
	pid = int(rec[0][1])
	want = [(float(r[2]), float(r[4])) for r in rec]
	p = json.load(gzip.open(d + "/timeline.json.gz", "rt"))
	th = [t for t in p["threads"] if t["pid"] == pid]
	assert len(th) == 1, [t["pid"] for t in p["threads"]]
	mk = [m for m in th[0]["markers"]["data"] if m[5]["type"] == "wait"]
	got = [(s["start_realtime_s"] + m[1] / 1000, s["start_realtime_s"] + m[2] / 1000) for m in mk
	       if m[5]["event"] == "Timeout:PgSleep"]
	assert len(want) == 2 and len(got) == 2, (want, [m[5] for m in mk])
	eps = 0.01
	for (r0, r1), (a, b) in zip(want, got):
	    assert r0 - eps <= a < b <= r1 + eps, (r0, a, b, r1)
	    assert 0.3 - eps <= b - a <= (r1 - r0) + eps, (b - a, r1 - r0)
	# each statement around its two clock readings, hardly longer than they are apart
	st = [(s["start_realtime_s"] + m[1] / 1000, s["start_realtime_s"] + m[2] / 1000) for m in
	      th[0]["markers"]["data"] if m[5]["type"] == "statement" and "pg_sleep" in m[5]["query"]]
	assert len(st) == 2, [m[5] for m in th[0]["markers"]["data"]]
	for (r0, r1), (a, b) in zip(want, st):
	    assert a <= r0 + eps and r1 - eps <= b and b - a <= (r1 - r0) + eps, (a, r0, r1, b)
	print(want, got, st)
	PY
'

test_expect_success 'the capture'"'"'s profile has the heavy statement on top, the steady one does not' '
	auto=$(ls -d caps/*-cpu) && sig=$(ls -d caps/*-signal) &&
	python3 -c "$share_py" ExecMakeTableFunctionResult $auto/profile.folded >share.auto &&
	python3 -c "$share_py" ExecMakeTableFunctionResult $sig/profile.folded >share.sig &&
	cat share.auto share.sig &&
	awk "{ exit !(\$1 >= 0.2 && \$2 >= 20) }" share.auto &&
	awk "{ exit !(\$1 <= 0.02 && \$2 >= 5) }" share.sig
'

test_expect_success 'a capture is whole: every file there, the flame graph and folded stacks agree, no partial left' '
	for d in caps/*; do
		for f in flame.svg profile.folded timeline.svg timeline.json.gz summary.json summary.txt; do
			test -s $d/$f || { echo "$d/$f missing"; return 1; }
		done &&
		"$TEST_LIB"/gecko-check $d/timeline.json.gz >/dev/null || return 1
		python3 - $d <<-\PY || return 1
		import json, sys, xml.etree.ElementTree as ET
		d = sys.argv[1]
		s = json.load(open(d + "/summary.json"))
		n = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/profile.folded"))
		assert n == s["samples"], (n, s["samples"])
		ET.parse(d + "/flame.svg")
		ET.parse(d + "/timeline.svg")
		PY
	done &&
	! ls -a caps | grep partial
'

# The server's semaphores of the probes the recorder attaches, one line.
sema_values() {
	local p bin=$(readlink /proc/$PG_PID/exe)
	for p in transaction__start query__start checkpoint__start; do
		usdt_semaphore $PG_PID $bin $p || return 1
	done | tr "\n" " "
}

# Reading the markers at the switch-outs, the recorder keeps only the checkpoint probes;
# with --usdt all of them.
test_expect_success 'kill -9 while a capture waits for its --post: no probe left, the capture only named partial' '
	test "$(sema_values)" = "0 0 0 " &&
	trace_start rec2.json record --pg "$PGDATA" --keep 5s --post 30s --trigger "cpu>=0%" -o caps2 -j &&
	test "$(sema_values)" = "0 0 1 " &&
	bpf_objs_of $TRACE_PID >objs2 &&
	wait_line rec2.json "d[\"report\"] == \"trigger\" and d[\"captured\"]" &&
	kill -KILL $TRACE_PID && wait $TRACE_PID; TRACE_PID= &&
	bpf_objs_gone objs2 &&
	test "$(sema_values)" = "0 0 0 " &&
	ls -a caps2 >left &&
	test_grep "^\..*\.partial$" left &&
	! grep -v "^\.\|partial" left &&
	trace_start rec3.json record --pg "$PGDATA" --usdt -o caps2 -j &&
	test "$(sema_values)" = "1 1 1 " &&
	trace_stop &&
	test "$(sema_values)" = "0 0 0 " &&
	json_py "assert d[\"markers_from\"] == \"usdt\", d" <rec3.json &&
	test_grep "removing .*partial" rec3.json.err &&
	! ls -a caps2 | grep partial
'

test_expect_success 'bad input: triggers, sizes, -o; nothing attached, nothing made' '
	test_expect_code 2 dbtap record --pg "$PGDATA" --trigger "p99>50" -o x 2>e1 &&
	test_grep "bad trigger .p99>50.: a latency needs its unit" e1 && test_grep "^hint:" e1 &&
	test_expect_code 2 dbtap record --pg "$PGDATA" --trigger "p98>5ms" -o x 2>e2 &&
	test_grep "unknown metric" e2 &&
	test_expect_code 2 dbtap record --pg "$PGDATA" --max-mem 1K -o x 2>e3 &&
	test_grep "bad --max-mem" e3 &&
	test_expect_code 2 dbtap record --pg "$PGDATA" --max-captures 0/h -o x 2>e4 &&
	test_expect_code 2 dbtap record --pg "$PGDATA" --keep 0 -o x 2>e5 &&
	test_expect_code 2 dbtap record --pg "$PGDATA" 2>e6 &&
	test_grep "needs -o DIR" e6 &&
	test_expect_code 2 dbtap record -p $$ --trigger "tps<5" -o x 2>e7 &&
	test_grep "needs --pg" e7 &&
	! test -e x
'

test_done
