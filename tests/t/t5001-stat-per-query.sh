#!/bin/bash
test_description='dbtap stat --by query|transaction: counters read in the kernel, statements from PgBackendStatus or the USDT probes'
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

# ctxt_switches PID: voluntary + nonvoluntary context switches of PID's main thread so far.
ctxt_switches() {
	awk "/^(non)?voluntary_ctxt_switches:/ { n += \$2 } END { print n }" "/proc/$1/status"
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

# Each path in its turn: the backends' rows read at their switches (the default), and
# the USDT probes.
test_expect_success 'N identical statements: N calls; task-clock sum within the backend total; both paths' '
	for path in pg_backend_status usdt; do
	opt= && test $path = pg_backend_status || opt=--usdt
	DBTAP_STAT_SELF_TIME=1 stat_start q.json -p $bpid --by query $opt \
		-e task-clock,page-faults,context-switches,cpu-migrations &&
	s0=$(schedstat $bpid) && c0=$(ctxt_switches $bpid) &&
	t0=$(date +%s%N) &&
	mapfile -t stmts < <(repeat 40 "select 4242 as dbtap_marker;") &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.2) as dbtap_sleep;" &&
	s1=$(schedstat $bpid) && c1=$(ctxt_switches $bpid) &&
	stat_stop &&
	json_py "
assert len(lines) == 1 and d[\"report\"] == \"summary\", lines
rows = {r[\"query\"]: r for r in d[\"statements\"]}
mark = [r for q, r in rows.items() if \"dbtap_marker\" in q]
slp = [r for q, r in rows.items() if \"dbtap_sleep\" in q]
assert len(mark) == 1 and len(slp) == 1, rows.keys()
m, s = mark[0], slp[0]
assert m[\"calls\"] == 40 and s[\"calls\"] == 1, (m, s)
# normalized as pg_stat_statements shows it
assert m[\"query\"] == \"select \$1 as dbtap_marker;\", m[\"query\"]
tick = 10e6  # schedstat of a running task lags by up to a tick
tc_sum = sum(r[\"events\"][\"task-clock\"][\"total_ns\"] for r in rows.values())
assert 0 < tc_sum <= ($s1 - $s0) + tick, (tc_sum, $s1 - $s0)
# pg_sleep(0.2) sleeps at least 0.2 s: little CPU, far below its wall time
sw = s[\"wall\"][\"total_us\"]
assert sw >= 0.2e6, s
assert s[\"events\"][\"task-clock\"][\"total_ns\"] < sw * 1e3 / 10, s
# it sleeps, so it is switched out
assert s[\"events\"][\"context-switches\"][\"total\"] >= 1, s
# the statements were switched out at most as often as the kernel switched the backend
# out in the window (/proc/PID/status: voluntary and not), how often depends on the load
cs_sum = sum(r[\"context_switches\"][\"total\"] for r in rows.values())
assert cs_sum <= $c1 - $c0, (cs_sum, $c1 - $c0)
assert m[\"events\"][\"context-switches\"][\"total\"] == m[\"context_switches\"][\"total\"], m
# each call is in the histogram: percentiles bracket the mean sensibly
tc = m[\"events\"][\"task-clock\"]
assert tc[\"calls_counted\"] == 40 and tc[\"p50_ns\"] <= tc[\"p99_ns\"] <= tc[\"max_ns\"], tc
w = m[\"wall\"]
assert w[\"calls_counted\"] == 40 and w[\"p50_us\"] <= w[\"p99_us\"] <= w[\"max_us\"], w
assert abs(w[\"mean_us\"] * 40 - w[\"total_us\"]) < 1e-6 * w[\"total_us\"], w
assert len(m[\"cpus\"]) >= 1 and all(0 <= c < 64 for c in m[\"cpus\"]), m
su = d
# the tag query session_run waits on is a statement too
assert su[\"calls\"] == 42 and len(su[\"statements\"]) == 3, su
assert all(v == 0 for v in su[\"dropped\"].values()), su
assert su[\"statements_from\"] == \"$path\", su
# DBTAP_STAT_SELF_TIME: the PgBackendStatus path counted each statement once, and read
# its text once (one backend, all of it before the summary)
st = [json.loads(l)[\"stat_self_time\"] for l in open(\"q.json.err\") if \"stat_self_time\" in l]
if \"$path\" == \"pg_backend_status\":
    assert len(st) == 1, st
    st = st[0]
    assert st[\"emit_runs\"] == 42 and st[\"text_runs\"] == 42, st
    assert st[\"switch_out_runs\"] >= 1 and st[\"row_runs\"] >= 42, st
    assert all(st[k + \"_ns\"] >= st[k + \"_runs\"] for k in (\"switch_out\", \"row\", \"emit\")), st
else:
    assert st == [], st
" <q.json || return 1
	done
'

test_expect_success '--by transaction: N implicit transactions are N commits' '
	stat_start t.json -p $bpid --by transaction -e task-clock &&
	mapfile -t stmts < <(repeat 25 "select 1;") &&
	session_run 7 s1 "${stmts[@]}" "begin;" "select 1/0;" "rollback;" &&
	stat_stop &&
	json_py "
rows = {r[\"outcome\"]: r for r in d[\"transactions\"]}
# 25 statements and the tag query after them commit; the failed block aborts once
assert rows[\"commit\"][\"calls\"] == 26, rows
assert rows[\"abort\"][\"calls\"] == 1, rows
" <t.json
'

test_expect_success 'a whole cluster: backends connecting after attach are counted' '
	stat_start c.json --pg="$PGDATA" --by query -e task-clock &&
	psql -XAtq -c "select 17 as dbtap_late" -c "select 18 as dbtap_late" >/dev/null &&
	psql -XAtq -c "select 19 as dbtap_late" >/dev/null &&
	stat_stop &&
	json_py "
rows = [r for r in d[\"statements\"] if \"dbtap_late\" in r[\"query\"]]
assert len(rows) == 1 and rows[0][\"calls\"] == 3, rows
" <c.json
'

test_expect_success '--compare: two backends side by side' '
	session_open s2 8 &&
	bpid2=$(cat s2.pid) &&
	stat_start cmp.json -p $bpid --compare pid:$bpid2 --by query -e task-clock &&
	mapfile -t a < <(repeat 10 "select 1 as dbtap_cmp;") &&
	mapfile -t b < <(repeat 30 "select 2 as dbtap_cmp;") &&
	session_run 7 s1 "${a[@]}" &&
	session_run 8 s2 "${b[@]}" &&
	stat_stop &&
	json_py "
rows = [r for r in d[\"statements\"] if \"dbtap_cmp\" in r[\"query\"]]
assert len(rows) == 1, rows
r = rows[0]
assert r[\"calls\"] == 10 and r[\"compare\"][\"calls\"] == 30, r
assert d[\"compare\"][\"target\"] == \"pid $bpid2\" and d[\"target\"] == \"pid $bpid\", d
" <cmp.json
'

test_expect_success '-i: interval reports count each call once, the final report all' '
	stat_start iv.json -p $bpid --by query -e task-clock -i 0.1 &&
	for i in 1 2 3 4 5 6; do
		session_run 7 s1 "select $i as dbtap_iv;" && sleep 0.1 || return 1
	done &&
	stat_stop &&
	json_py "
ivl = [l for l in lines if l[\"report\"] == \"interval\"]
iv = sum(r[\"calls\"] for l in ivl for r in l[\"statements\"] if \"dbtap_iv\" in r[\"query\"])
tot = [r for r in d[\"statements\"] if \"dbtap_iv\" in r[\"query\"]]
assert d[\"report\"] == \"summary\" and len(tot) == 1 and tot[0][\"calls\"] == 6, tot
# the last, partial interval is printed too: each call is in exactly one interval
assert iv == 6 and len(ivl) >= 2, (iv, len(ivl))
assert sum(l[\"calls\"] for l in ivl) == d[\"calls\"], (sum(l[\"calls\"] for l in ivl), d[\"calls\"])
" <iv.json
'

test_expect_success 'pgbench -C, a new backend per transaction: every statement counted; both paths' '
	echo "select 42 as dbtap_conn;" >conn.sql &&
	for opt in "" --usdt; do
	stat_start pc.json --pg="$PGDATA" --by query $opt -e task-clock,page-faults &&
	pg_bench -n -C -c 2 -t 15 -f conn.sql >pgbench.out 2>&1 &&
	stat_stop &&
	done=$(sed -n "s/^number of transactions actually processed: \([0-9]*\).*/\1/p" pgbench.out) &&
	test "$done" = 30 &&
	json_py "
r = [s for s in d[\"statements\"] if \"dbtap_conn\" in s[\"query\"]]
assert len(r) == 1 and r[0][\"calls\"] == $done, r
# a fresh backend faults its pages in: the counters followed each one from its start
assert r[0][\"events\"][\"page-faults\"][\"calls_counted\"] == $done, r
" <pc.json || return 1
	done
'

test_expect_success 'a transaction of seven statements, two pgbench clients: each statement once a transaction' '
	psql -XAtq -c "create table dbtap_acc (id int primary key, v int)" \
		-c "insert into dbtap_acc select g, 0 from generate_series(1, 100) g" \
		-c "create table dbtap_hist (id int, v int)" &&
	cat >tx.sql <<-\EOF &&
	\set id random(1, 100)
	BEGIN;
	UPDATE dbtap_acc SET v = v + 1 WHERE id = :id;
	SELECT v FROM dbtap_acc WHERE id = :id;
	UPDATE dbtap_acc SET v = v - 1 WHERE id = :id;
	SELECT count(*) FROM dbtap_hist WHERE id = :id;
	INSERT INTO dbtap_hist VALUES (:id, 1);
	END;
	EOF
	stat_start tx.json --pg="$PGDATA" --by query -e task-clock &&
	pg_bench -n -c 2 -t 150 -f tx.sql >tx.out 2>&1 &&
	stat_stop &&
	done=$(sed -n "s/^number of transactions actually processed: \([0-9]*\).*/\1/p" tx.out) &&
	test "$done" = 300 &&
	json_py "
starts = (\"begin\", \"update dbtap_acc set v = v +\", \"select v from dbtap_acc\",
          \"update dbtap_acc set v = v -\", \"select count(*) from dbtap_hist\",
          \"insert into dbtap_hist\", \"end\")
calls = {k: sum(r[\"calls\"] for r in d[\"statements\"] if r[\"query\"].lower().startswith(k))
         for k in starts}
assert all(n == $done for n in calls.values()), calls
assert d[\"statements_from\"] == \"pg_backend_status\", d
assert all(r[\"events\"][\"task-clock\"][\"calls_counted\"] == r[\"calls\"] for r in d[\"statements\"]), d
" <tx.json
'

test_expect_success '--pg --per process (the older spelling of --by pid): one row per process, typed; later backends in the postmaster'"'"'s' '
	stat_start pp.json --pg="$PGDATA" --per process -e task-clock,page-faults &&
	psql -XAtq -c "select count(*) from generate_series(1, 100000)" >/dev/null &&
	session_run 7 s1 "select 1;" &&
	stat_stop &&
	json_py "
tot = d[\"processes\"]
by = {p[\"pid\"]: p for p in tot}
assert by[$bpid][\"type\"] == \"client backend\" and by[$bpid][\"database\"] == \"postgres\", by[$bpid]
pm = by[$PG_PID]
assert pm[\"type\"] == \"postmaster\" and pm[\"database\"] is None, pm
# the psql started after attach ran in a backend forked from the postmaster: its work
# (100 000 rows, a fresh process) is in the postmaster row
assert pm[\"events\"][\"page-faults\"][\"value\"] > 100, pm
types = {p[\"type\"] for p in tot}
assert \"checkpointer\" in types, types
" <pp.json
'

# The backends of one type (or database, user) in pg_stat_activity, other than the
# one asking.
backends_where() {
	psql -XAtq -c "select count(*) from pg_stat_activity where $1 and pid <> pg_backend_pid()"
}

test_expect_success '--by type and --by database: a backend'"'"'s faults in its rows, processes as pg_stat_activity counts them' '
	ncb=$(backends_where "backend_type = '"'"'client backend'"'"'") &&
	ndb=$(backends_where "datname = '"'"'postgres'"'"'") &&
	for by in type database; do
		f0=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		stat_start by$by.json --pg="$PGDATA" --by $by -e page-faults,task-clock &&
		session_run 7 s1 "select count(*) as dbtap_by from generate_series(1, 200000);" &&
		f1=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		stat_stop &&
		json_py "
by = \"$by\"
rows = {r[by]: r for r in d[by + \"s\"]}
row = rows[\"client backend\" if by == \"type\" else \"postgres\"]
# the processes running at the start, one counter set each (those forked later are
# in the postmaster row: its counters inherit)
assert row[\"process_count\"] == ($ncb if by == \"type\" else $ndb), row
# the other backends of the row were idle: its faults are the statement backend own
pf = row[\"events\"][\"page-faults\"][\"value\"]
assert $f1 - $f0 - 16 <= pf <= $f1 - $f0 + 16, (pf, $f1 - $f0)
assert pf > 100, row
if by == \"type\":
    assert rows[\"postmaster\"][\"process_count\"] == 1 and \"checkpointer\" in rows, rows.keys()
else:
    # background processes have no database
    assert None in rows, rows.keys()
" <by$by.json || return 1
	done
'

test_expect_success '--compare with a saved --by query run' '
	stat_start sq.json -p $bpid --by query -e task-clock,page-faults &&
	mapfile -t a < <(repeat 7 "select 1 as dbtap_saved;") &&
	session_run 7 s1 "${a[@]}" &&
	stat_stop &&
	stat_start lq.json -p $bpid --by query -e task-clock,page-faults --compare sq.json &&
	mapfile -t b < <(repeat 12 "select 2 as dbtap_saved;") &&
	session_run 7 s1 "${b[@]}" &&
	stat_stop &&
	json_py "
saved = [json.loads(l) for l in open(\"sq.json\")]
sr = [s for s in saved[-1][\"statements\"] if \"dbtap_saved\" in s[\"query\"]][0]
r = [s for s in d[\"statements\"] if \"dbtap_saved\" in s[\"query\"]][0]
assert r[\"calls\"] == 12 and r[\"compare\"][\"calls\"] == 7, r
# shown as saved, every figure
for k in (\"wall\", \"context_switches\", \"cpu_migrations\", \"cpus\", \"multi_cpu_calls\", \"events\"):
    assert r[\"compare\"][k] == sr[k], (k, r, sr)
assert d[\"compare\"][\"target\"].startswith(\"saved run sq.json\"), d
" <lq.json
'

# Waits (60 s at most) until backend $1 waits for an advisory lock, seen from another
# connection: a wait that lasts until the test ends it, however slow the machine is
# (a pg_sleep of a fixed length could end before a loaded machine saw it).
wait_pg_lock() {
	for i in $(seq 1 600); do
		test "$(psql -XAtq -c "select wait_event from pg_stat_activity where pid = $1")" = advisory &&
			return 0
		sleep 0.1
	done
	echo "backend $1 never waited for the advisory lock"
	return 1
}

	test_expect_success SMP 'a statement moved to another CPU mid-way: 1 migration, both CPUs, its page faults' '
		taskset -pc 0 $bpid >/dev/null &&
		stat_start m.json -p $bpid --by query -e task-clock,page-faults,cpu-migrations &&
		f0=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		s0=$(schedstat $bpid) &&
		session_run 8 s2 "select pg_advisory_lock(4242);" &&
		echo "select count(*) as dbtap_mig from (select pg_advisory_xact_lock(4242)) s, generate_series(1, 300000);" >&7 &&
		wait_pg_lock $bpid &&
		taskset -pc 1 $bpid >/dev/null &&
		session_run 8 s2 "select pg_advisory_unlock(4242);" &&
		session_run 7 s1 &&
		f1=$(awk "{print \$10 + \$12}" /proc/$bpid/stat) &&
		s1=$(schedstat $bpid) &&
		stat_stop &&
		taskset -pc 0-$(($(nproc) - 1)) $bpid >/dev/null &&
		json_py "
rows = d[\"statements\"]
mig = [r for r in rows if \"dbtap_mig\" in r[\"query\"]]
assert len(mig) == 1 and mig[0][\"calls\"] == 1, rows
m = mig[0]
# pinned to CPU 0 when it started, to CPU 1 while it waited: one move, both CPUs
assert m[\"cpus\"] == [0, 1] and m[\"multi_cpu_calls\"] == 1, m
assert m[\"events\"][\"cpu-migrations\"][\"total\"] == 1, m
# the faults of the window (minflt + majflt of /proc/PID/stat) are the statements own,
# but for the few the backend takes between statements
pf = sum(r[\"events\"][\"page-faults\"][\"total\"] for r in rows)
assert $f1 - $f0 - 16 <= pf <= $f1 - $f0, (pf, $f1 - $f0)
assert m[\"events\"][\"page-faults\"][\"total\"] > 100, m
# its CPU time is counted on both CPUs: the statements hold nearly all the backend ran
# in the window (the rest is reading the next message and writing results)
tc = sum(r[\"events\"][\"task-clock\"][\"total_ns\"] for r in rows)
ran = $s1 - $s0
assert 0.8 * ran - 10e6 <= tc <= ran + 10e6, (tc, ran)
" <m.json
	'

	test_expect_success !PMU '--by query without a PMU: hardware events not supported, software ones counted' '
		stat_start hw.json -p $bpid --by query -e instructions:u,task-clock &&
		session_run 7 s1 "select 5 as dbtap_hw;" &&
		stat_stop &&
		test_grep "event .instructions:u.: not supported on this machine" hw.json.err &&
		json_py "
r = [s for s in d[\"statements\"] if \"dbtap_hw\" in s[\"query\"]][0]
i = r[\"events\"][\"instructions:u\"]
assert i[\"counted\"] is False and i[\"total\"] is None, i
assert i[\"reason\"] == \"not supported on this machine\", i
assert r[\"events\"][\"task-clock\"][\"counted\"] and r[\"events\"][\"task-clock\"][\"total_ns\"] > 0, r
" <hw.json
	'

test_expect_success '--by query as the cluster'"'"'s own unprivileged user: refused with a hint' '
	test_expect_code 1 dbtap_as postgres stat --by query --pg="$PGDATA" -e task-clock -d 0.2 2>up.err &&
	test_grep "error: --by query needs privileges" up.err &&
	test_grep "hint: run as root" up.err
'

test_expect_success '--usdt without --by query: refused with a hint, nothing attached' '
	for by in "--by transaction" "--by pid" ""; do
		test_expect_code 2 dbtap stat -p $bpid $by --usdt -d 0.2 >us.out 2>us.err &&
		test_grep "^error: --usdt is for --by query" us.err &&
		test_grep "^hint: " us.err &&
		! test -s us.out || return 1
	done
'

test_expect_success 'nothing stays attached after Ctrl-C, on either path: the BPF programs are gone' '
	stat_start n.json --pg="$PGDATA" --by query -e task-clock &&
	test_grep "statements from PgBackendStatus at switches, no USDT probe" n.json.err &&
	bpf_objs_of $stat_pid >objs &&
	# at sched_switch, at sock_recv_length, and the look at the row both tail-call
	test $(grep -c "^prog " objs) = 3 &&
	stat_stop &&
	stat_start nu.json --pg="$PGDATA" --by query --usdt -e task-clock &&
	test_grep "statements from the USDT probes" nu.json.err &&
	bpf_objs_of $stat_pid >>objs &&
	test $(grep -c "^prog " objs) -ge 4 &&
	stat_stop &&
	bpf_objs_gone objs
'

test_expect_success '--top keeps the slowest statements by default (--sort wall), --sort calls the most called' '
	"$DBTAP" stat -p $bpid --by query -e task-clock --top 1 >top.txt 2>top.err &
	tpid=$! &&
	test_when_finished "kill $tpid 2>/dev/null; true" &&
	wait_for_line top.err "^counting" &&
	mapfile -t stmts < <(repeat 30 "select 7 as dbtap_often;") &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.3) as dbtap_slow;" &&
	kill -INT $tpid && wait $tpid &&
	test_grep "dbtap_slow" top.txt &&
	! grep -q "dbtap_often" top.txt || return 1
	"$DBTAP" stat -p $bpid --by query -e task-clock --top 1 --sort calls >topc.txt 2>topc.err &
	tpid=$! &&
	wait_for_line topc.err "^counting" &&
	session_run 7 s1 "${stmts[@]}" "select pg_sleep(0.3) as dbtap_slow;" &&
	kill -INT $tpid && wait $tpid &&
	test_grep "^ 30 .*dbtap_often" topc.txt &&
	! grep -q "dbtap_slow" topc.txt &&
	test_expect_code 2 dbtap stat -p $bpid --by query --sort slowness -d 0.2 2>bad.err &&
	test_grep "^error: unknown --sort key .slowness." bad.err &&
	test_grep "^hint: --sort wall" bad.err
'

test_expect_success 'the statement map full (4,096 shapes): every one reported, the rest counted as dropped, peak RSS under 64 MB' '
	python3 -c "for i in range(4200): print(f\"select {i} as dbtap_rss_{i};\")" >rss.sql &&
	python3 - "$DBTAP" "$PGDATA" >rss.result <<-\EOF &&
	import os, signal, subprocess, sys, time
	dbtap, pgdata = sys.argv[1:3]
	out, err = open("rss.json", "w"), open("rss.err", "w")
	p = subprocess.Popen([dbtap, "-j", "stat", "--by", "query", "-e", "task-clock",
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
su = d
assert su[\"report\"] == \"summary\", su[\"report\"]
rows = su[\"statements\"]
rss = [r for r in rows if \"dbtap_rss_\" in r[\"query\"]]
assert len(rows) == 4096, len(rows)
assert all(r[\"calls\"] == 1 for r in rss), [r for r in rss if r[\"calls\"] != 1][:3]
# every shape is either a statement of its own or a call counted as lost
lost = su[\"dropped\"][\"statements_map_full\"]
assert lost > 0 and len(rss) + lost >= 4200, (len(rss), lost)
" <rss.json
'

test_done
