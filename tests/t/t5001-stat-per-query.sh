#!/bin/bash
test_description='dbtap stat --per query|transaction: counters read in the kernel at the USDT probes'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/stat.sh
. "$TEST_LIB"/bpfobj.sh

# A psql session fed through a fifo: its backend pid is known before it runs anything.
# session_open NAME: sets NAME's fd (7 or 8) and writes its backend pid to NAME.pid.
session_open() {
	local name=$1 fd=$2
	rm -f "$name.in" && mkfifo "$name.in" || return 1
	psql -XAtq <"$name.in" >"$name.out" 2>&1 &
	test_atexit "kill $!"
	eval "exec $fd>$name.in"
	echo "select 'pid', pg_backend_pid();" >&$fd
	wait_for_line "$name.out" '^pid|' || return 1
	sed -n 's/^pid|//p' "$name.out" >"$name.pid"
}

# session_run FD NAME SQL...: sends each statement, then waits until all have run.
session_run() {
	local fd=$1 name=$2 tag
	shift 2
	tag="end$RANDOM$RANDOM"
	for s in "$@"; do
		echo "$s" >&$fd
	done
	echo "select '$tag';" >&$fd
	wait_for_line "$name.out" "^$tag\$"
}

repeat() {
	local n=$1 s=$2
	for i in $(seq 1 $n); do
		printf "%s\n" "$s"
	done
}

test_expect_success 'set up a cluster and a session' '
	pg_start pg "autovacuum = off" &&
	session_open s1 7 &&
	bpid=$(cat s1.pid) && test -n "$bpid"
'

test_expect_success 'N identical statements: N calls; task-clock sum within the backend total' '
	stat_start q.json -p $bpid --per query -e task-clock,page-faults,context-switches,cpu-migrations &&
	s0=$(schedstat $bpid) &&
	t0=$(date +%s%N) &&
	mapfile -t stmts < <(repeat 40 "select 4242 as dbtap_marker;") &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.2) as dbtap_sleep;" &&
	s1=$(schedstat $bpid) &&
	stat_stop &&
	json_py "
rows = {l[\"query\"]: l for l in lines if l[\"report\"] == \"total\"}
mark = [r for q, r in rows.items() if \"dbtap_marker\" in q]
slp = [r for q, r in rows.items() if \"dbtap_sleep\" in q]
assert len(mark) == 1 and len(slp) == 1, rows.keys()
m, s = mark[0], slp[0]
assert m[\"calls\"] == 40 and s[\"calls\"] == 1, (m, s)
# normalized as pg_stat_statements shows it
assert m[\"query\"] == \"select \$1 as dbtap_marker;\", m[\"query\"]
tick = 10e6  # schedstat of a running task lags by up to a tick
tc_sum = sum(r[\"events\"][\"task-clock\"][\"sum\"] for r in rows.values())
assert 0 < tc_sum <= ($s1 - $s0) + tick, (tc_sum, $s1 - $s0)
# pg_sleep(0.2) sleeps at least 0.2 s: little CPU, far below its wall time
sw = s[\"wall_ns\"][\"sum\"]
assert sw >= 0.2e9, s
assert s[\"events\"][\"task-clock\"][\"sum\"] < sw / 10, s
# it sleeps, so it is switched out; the cheap ones almost never are
assert s[\"events\"][\"context-switches\"][\"sum\"] >= 1, s
assert m[\"events\"][\"context-switches\"][\"sum\"] <= 40 / 5, m
assert m[\"events\"][\"context-switches\"][\"sum\"] == m[\"context_switches\"][\"sum\"], m
# each call is in the histogram: percentiles bracket the mean sensibly
tc = m[\"events\"][\"task-clock\"]
assert tc[\"calls_counted\"] == 40 and tc[\"p50\"] <= tc[\"max\"], tc
assert len(m[\"cpus\"]) >= 1 and all(0 <= c < 64 for c in m[\"cpus\"]), m
su = [l for l in lines if l[\"report\"] == \"summary\"][0]
# the tag query session_run waits on is a statement too
assert su[\"calls\"] == 42 and su[\"statements\"] == 3, su
assert all(v == 0 for v in su[\"dropped\"].values()), su
" <q.json
'

test_expect_success '--per transaction: N implicit transactions are N commits' '
	stat_start t.json -p $bpid --per transaction -e task-clock &&
	mapfile -t stmts < <(repeat 25 "select 1;") &&
	session_run 7 s1 "${stmts[@]}" "begin;" "select 1/0;" "rollback;" &&
	stat_stop &&
	json_py "
rows = {l[\"outcome\"]: l for l in lines if l[\"report\"] == \"total\"}
# 25 statements and the tag query after them commit; the failed block aborts once
assert rows[\"commit\"][\"calls\"] == 26, rows
assert rows[\"abort\"][\"calls\"] == 1, rows
" <t.json
'

test_expect_success 'a whole cluster: backends connecting after attach are counted' '
	stat_start c.json --pg="$PGDATA" --per query -e task-clock &&
	psql -XAtq -c "select 17 as dbtap_late" -c "select 18 as dbtap_late" >/dev/null &&
	psql -XAtq -c "select 19 as dbtap_late" >/dev/null &&
	stat_stop &&
	json_py "
rows = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_late\" in l[\"query\"]]
assert len(rows) == 1 and rows[0][\"calls\"] == 3, rows
" <c.json
'

test_expect_success '--compare: two backends side by side' '
	session_open s2 8 &&
	bpid2=$(cat s2.pid) &&
	stat_start cmp.json -p $bpid --compare pid:$bpid2 --per query -e task-clock &&
	mapfile -t a < <(repeat 10 "select 1 as dbtap_cmp;") &&
	mapfile -t b < <(repeat 30 "select 2 as dbtap_cmp;") &&
	session_run 7 s1 "${a[@]}" &&
	session_run 8 s2 "${b[@]}" &&
	stat_stop &&
	json_py "
rows = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_cmp\" in l[\"query\"]]
assert len(rows) == 1, rows
r = rows[0]
assert r[\"calls\"] == 10 and r[\"compare\"][\"calls\"] == 30, r
assert r[\"compare\"][\"target\"] == \"pid $bpid2\" and r[\"target\"] == \"pid $bpid\", r
" <cmp.json
'

test_expect_success '-i: interval reports count each call once, the final report all' '
	stat_start iv.json -p $bpid --per query -e task-clock -i 0.1 &&
	for i in 1 2 3 4 5 6; do
		session_run 7 s1 "select $i as dbtap_iv;" && sleep 0.1 || return 1
	done &&
	stat_stop &&
	json_py "
iv = sum(l[\"calls\"] for l in lines if l[\"report\"] == \"interval\" and \"dbtap_iv\" in l[\"query\"])
tot = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_iv\" in l[\"query\"]]
assert len(tot) == 1 and tot[0][\"calls\"] == 6, tot
assert 1 <= iv <= 6, iv
assert sum(1 for l in lines if l[\"report\"] == \"interval-summary\") >= 2, lines
" <iv.json
'

test_expect_success 'pgbench -C, a new backend per transaction: every statement counted' '
	echo "select 42 as dbtap_conn;" >conn.sql &&
	stat_start pc.json --pg="$PGDATA" --per query -e task-clock,page-faults &&
	pg_bench -n -C -c 2 -t 15 -f conn.sql >pgbench.out 2>&1 &&
	stat_stop &&
	done=$(sed -n "s/^number of transactions actually processed: \([0-9]*\).*/\1/p" pgbench.out) &&
	test "$done" = 30 &&
	json_py "
r = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_conn\" in l[\"query\"]]
assert len(r) == 1 and r[0][\"calls\"] == $done, r
# a fresh backend faults its pages in: the counters followed each one from its start
assert r[0][\"events\"][\"page-faults\"][\"calls_counted\"] == $done, r
" <pc.json
'

test_expect_success '--pg --per process: one report per process, typed; later backends in the postmaster'"'"'s' '
	stat_start pp.json --pg="$PGDATA" --per process -e task-clock,page-faults &&
	psql -XAtq -c "select count(*) from generate_series(1, 100000)" >/dev/null &&
	session_run 7 s1 "select 1;" &&
	stat_stop &&
	json_py "
tot = [l for l in lines if l[\"report\"] == \"total\"]
by = {l[\"pid\"]: l for l in tot}
assert by[$bpid][\"type\"] == \"client backend\", by[$bpid]
pm = by[$PG_PID]
assert pm[\"type\"].startswith(\"postmaster\"), pm
# the psql started after attach ran in a backend forked from the postmaster: its work
# (100 000 rows, a fresh process) is in the postmaster row
assert pm[\"events\"][\"page-faults\"][\"value\"] > 100, pm
types = {l[\"type\"] for l in tot}
assert \"checkpointer\" in types, types
" <pp.json
'

test_expect_success '--compare with a saved --per query run' '
	stat_start sq.json -p $bpid --per query -e task-clock,page-faults &&
	mapfile -t a < <(repeat 7 "select 1 as dbtap_saved;") &&
	session_run 7 s1 "${a[@]}" &&
	stat_stop &&
	stat_start lq.json -p $bpid --per query -e task-clock,page-faults --compare sq.json &&
	mapfile -t b < <(repeat 12 "select 2 as dbtap_saved;") &&
	session_run 7 s1 "${b[@]}" &&
	stat_stop &&
	json_py "
saved = [json.loads(l) for l in open(\"sq.json\")]
sr = [l for l in saved if l[\"report\"] == \"total\" and \"dbtap_saved\" in l[\"query\"]][0]
r = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_saved\" in l[\"query\"]][0]
assert r[\"calls\"] == 12 and r[\"compare\"][\"calls\"] == 7, r
assert r[\"compare\"][\"events\"][\"task-clock\"] == sr[\"events\"][\"task-clock\"], (r, sr)
assert r[\"compare\"][\"target\"].startswith(\"saved run sq.json\"), r
" <lq.json
'

# Waits until backend $1 sleeps in pg_sleep (seen from another connection).
wait_pg_sleep() {
	for i in $(seq 1 200); do
		test "$(psql -XAtq -c "select wait_event from pg_stat_activity where pid = $1")" = PgSleep &&
			return 0
		sleep 0.05
	done
	return 1
}

	test_expect_success SMP 'a statement moved to another CPU mid-way: 1 migration, both CPUs, its page faults' '
		taskset -pc 0 $bpid >/dev/null &&
		stat_start m.json -p $bpid --per query -e task-clock,page-faults,cpu-migrations &&
		f0=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		s0=$(schedstat $bpid) &&
		echo "select count(*) as dbtap_mig from (select pg_sleep(0.3)) s, generate_series(1, 300000);" >&7 &&
		wait_pg_sleep $bpid &&
		taskset -pc 1 $bpid >/dev/null &&
		session_run 7 s1 &&
		f1=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		s1=$(schedstat $bpid) &&
		stat_stop &&
		taskset -pc 0-$(($(nproc) - 1)) $bpid >/dev/null &&
		json_py "
rows = [l for l in lines if l[\"report\"] == \"total\"]
mig = [r for r in rows if \"dbtap_mig\" in r[\"query\"]]
assert len(mig) == 1 and mig[0][\"calls\"] == 1, rows
m = mig[0]
# pinned to CPU 0 when it started, to CPU 1 while it slept: one move, both CPUs
assert m[\"cpus\"] == [0, 1] and m[\"multi_cpu_calls\"] == 1, m
assert m[\"events\"][\"cpu-migrations\"][\"sum\"] == 1, m
# the faults of the window (minflt + majflt of /proc/PID/stat) are the statements own,
# but for the few the backend takes between statements
pf = sum(r[\"events\"][\"page-faults\"][\"sum\"] for r in rows)
assert $f1 - $f0 - 16 <= pf <= $f1 - $f0, (pf, $f1 - $f0)
assert m[\"events\"][\"page-faults\"][\"sum\"] > 100, m
# its CPU time is counted on both CPUs: the statements hold nearly all the backend ran
# in the window (the rest is reading the next message and writing results)
tc = sum(r[\"events\"][\"task-clock\"][\"sum\"] for r in rows)
ran = $s1 - $s0
assert 0.8 * ran - 10e6 <= tc <= ran + 10e6, (tc, ran)
" <m.json
	'

	test_expect_success !PMU '--per query without a PMU: hardware events not supported, software ones counted' '
		stat_start hw.json -p $bpid --per query -e instructions:u,task-clock &&
		session_run 7 s1 "select 5 as dbtap_hw;" &&
		stat_stop &&
		test_grep "event .instructions:u.: not supported on this machine" hw.json.err &&
		json_py "
r = [l for l in lines if l[\"report\"] == \"total\" and \"dbtap_hw\" in l[\"query\"]][0]
i = r[\"events\"][\"instructions:u\"]
assert i[\"counted\"] is False and i[\"sum\"] is None, i
assert i[\"reason\"] == \"not supported on this machine\", i
assert r[\"events\"][\"task-clock\"][\"counted\"] and r[\"events\"][\"task-clock\"][\"sum\"] > 0, r
" <hw.json
	'

test_expect_success '--per as the cluster'"'"'s own unprivileged user: refused with a hint' '
	test_expect_code 1 dbtap_as postgres stat --per query --pg="$PGDATA" -e task-clock -d 0.2 2>up.err &&
	test_grep "error: --per needs privileges" up.err &&
	test_grep "hint: run as root" up.err
'

test_expect_success 'nothing stays attached after Ctrl-C: the BPF programs are gone' '
	stat_start n.json --pg="$PGDATA" --per query -e task-clock &&
	bpf_objs_of $stat_pid >objs &&
	test $(grep -c "^prog " objs) -ge 3 &&
	stat_stop &&
	bpf_objs_gone objs
'

test_expect_success '--top keeps the slowest statements by default (--sort wall), --sort calls the most called' '
	"$DBTAP" stat -p $bpid --per query -e task-clock --top 1 >top.txt 2>top.err &
	tpid=$! &&
	test_when_finished "kill $tpid 2>/dev/null; true" &&
	wait_for_line top.err "^counting" &&
	mapfile -t stmts < <(repeat 30 "select 7 as dbtap_often;") &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.3) as dbtap_slow;" &&
	kill -INT $tpid && wait $tpid &&
	test_grep "dbtap_slow" top.txt &&
	! grep -q "dbtap_often" top.txt || return 1
	"$DBTAP" stat -p $bpid --per query -e task-clock --top 1 --sort calls >topc.txt 2>topc.err &
	tpid=$! &&
	wait_for_line topc.err "^counting" &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.3) as dbtap_slow;" &&
	kill -INT $tpid && wait $tpid &&
	test_grep "^ 30 .*dbtap_often" topc.txt &&
	! grep -q "dbtap_slow" topc.txt &&
	test_expect_code 2 dbtap stat -p $bpid --per query --sort slowness -d 0.2 2>bad.err &&
	test_grep "^error: unknown --sort key .slowness." bad.err &&
	test_grep "^hint: --sort wall" bad.err
'

test_expect_success 'the statement map full (4,096 shapes): every one reported, the rest counted as dropped, peak RSS under 64 MB' '
	python3 -c "for i in range(4200): print(f\"select {i} as dbtap_rss_{i};\")" >rss.sql &&
	python3 - "$DBTAP" "$PGDATA" >rss.result <<-\EOF &&
	import os, signal, subprocess, sys, time
	dbtap, pgdata = sys.argv[1:3]
	out, err = open("rss.json", "w"), open("rss.err", "w")
	p = subprocess.Popen([dbtap, "-j", "stat", "--per", "query", "-e", "task-clock",
	                      "-i", "1", "--pg", pgdata], stdout=out, stderr=err)
	deadline = time.time() + 30
	while "counting" not in open("rss.err").read() and time.time() < deadline:
	    time.sleep(0.05)
	subprocess.run(["psql", "-XAtq", "-f", "rss.sql"], stdout=subprocess.DEVNULL, check=True)
	time.sleep(1.5)  # an interval report with the map full: two tables held
	p.send_signal(signal.SIGINT)
	_, status, ru = os.wait4(p.pid, 0)
	print(os.waitstatus_to_exitcode(status), ru.ru_maxrss)
	EOF
	read rc kb <rss.result &&
	echo "exit $rc, peak RSS $kb KiB" &&
	test "$rc" = 0 &&
	test "$kb" -le $((64 * 1024)) &&
	json_py "
su = [l for l in lines if l[\"report\"] == \"summary\"][-1]
rows = [l for l in lines if l[\"report\"] == \"total\"]
rss = [r for r in rows if \"dbtap_rss_\" in r[\"query\"]]
assert su[\"statements\"] == 4096 == len(rows), su
assert all(r[\"calls\"] == 1 for r in rss), [r for r in rss if r[\"calls\"] != 1][:3]
# every shape is either a statement of its own or a call counted as lost
lost = su[\"dropped\"][\"statements_map_full\"]
assert lost > 0 and len(rss) + lost >= 4200, (len(rss), lost)
" <rss.json
'

test_done
