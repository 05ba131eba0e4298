#!/bin/bash
test_description='dbtap wait: pg_sleep time by wait event and statement, idle apart, --sort, -t'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

# logged_sleeps FROM N [STATEMENT...]: the seconds the server logged
# (log_min_duration_statement = 0) for its N statements of those texts (default
# "select pg_sleep(0.2);") in its log past byte FROM.
logged_sleeps() {
	local from=$1 n=$2
	shift 2
	[ $# -gt 0 ] || set -- "select pg_sleep(0.2);"
	python3 - "$TRASH/pg/server.log" "$from" "$n" "$@" <<-\PY
	import sys
	log = open(sys.argv[1], "rb")
	log.seek(int(sys.argv[2]))
	texts = tuple("  statement: " + t for t in sys.argv[4:])
	ms = [float(l.split("duration: ")[1].split(" ms")[0])
	      for l in log.read().decode(errors="replace").splitlines()
	      if "duration: " in l and l.endswith(texts)]
	assert len(ms) == int(sys.argv[3]), ms
	print(sum(ms) / 1e3)
	PY
}

# sleeps_traced OUT N [TAIL.sql] [WAIT_OPTION...]: `dbtap wait -j --by query` (and the
# options) in OUT over one psql running N statements "select pg_sleep(0.2);", then the
# lines of TAIL.sql ("" for none); sets LOGGED to the seconds the server logged for them.
sleeps_traced() {
	local out=$1 n=$2 tail=$3 from
	shift 3
	{ echo "select pg_backend_pid();" &&
	  for i in $(seq 1 $n); do echo "select pg_sleep(0.2);"; done &&
	  { [ -z "$tail" ] || cat "$tail"; }; } >"$out.sql" &&
	trace_start "$out" wait --pg="$PGDATA" -j --by query "$@" &&
	from=$(stat -c %s "$TRASH/pg/server.log") &&
	PGOPTIONS="-c log_min_duration_statement=0" psql -XAt -f "$out.sql" >"$out.out" &&
	trace_stop &&
	LOGGED=$(logged_sleeps $from $n)
}

# The sleeps asked are 0.2 s each; a backend woken at the end of one waits in the run
# queue for a CPU before it clears its wait event (pg_stat_activity shows PgSleep until
# then, and so does dbtap), 40 ms of 200 at load 20 on two CPUs. So the truth above
# the sleeps asked is the server's own clock: the statements' durations as it logged them.
# sleeps_check OUT N: OUT's summary has one Timeout:PgSleep row, under that statement,
# counted N times, of at least the N x 0.2 s asked (within 2 %) and at most the time the
# statements took by the server's clock (sleeps_traced's LOGGED).
sleeps_check() {
	json_py "
rows = [dict(w, query=g[\"query\"]) for g in d[\"statements\"] for w in g[\"waits\"]
        if w[\"wait_event_type\"] == \"Timeout\" and w[\"wait_event\"] == \"PgSleep\"]
assert len(rows) == 1, d[\"statements\"]
r = rows[0]
assert r[\"query\"] == \"select pg_sleep(\$1);\", r
assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\", d
assert r[\"count\"] == $2, r
assert $2 * 0.2 * 0.98 <= r[\"wait_s\"] <= $LOGGED * 1.001, (r, $LOGGED)
" <"$1"
}

test_expect_success 'pg_sleep(0.2) x10: Timeout:PgSleep 2.0 s within 2 %, count 10, that statement' '
	sleeps_traced w1.json 10 "" &&
	sleeps_check w1.json 10
'

test_expect_success 'idle 3 s between statements: reported apart; inside a transaction, counted' '
	# the client sleeps between statements (its own clock), the backend waits in ClientRead
	{ echo "select pg_backend_pid();" && echo "\\! sleep 3" && echo "select 1;" &&
	  echo "begin;" && echo "select 2;" && echo "\\! sleep 3" && echo "commit;"; } >i.sql &&
	trace_start w2.json wait --pg="$PGDATA" -j --by pid &&
	t0=$(date +%s.%N) &&
	psql -XAt -f i.sql >i.out &&
	trace_stop &&
	t1=$(date +%s.%N) &&
	pid=$(sed -n 1p i.out) &&
	json_py "
pid = $pid
idle = [r for r in d[\"idle\"] if r[\"pid\"] == pid]
me = [g for g in d[\"processes\"] if g[\"pid\"] == pid]
assert len(me) == 1, d[\"processes\"]
waits = [r for r in me[0][\"waits\"] if r[\"wait_event\"] == \"ClientRead\"]
assert len(idle) == 1 and idle[0][\"wait_event_type\"] == \"Client\", d[\"idle\"]
# the sleep outside a transaction: idle, not in the totals; the same sleep inside
# BEGIN ... COMMIT: a counted wait. Each at least the 3 s slept; at most, both and
# all the other time of the backend lie between the start of psql and the report (a
# loaded machine stretches that span and the waits alike)
assert idle[0][\"wait_s\"] >= 3.0, idle
assert len(waits) == 1 and waits[0][\"wait_s\"] >= 3.0, waits
assert waits[0][\"kind\"] == \"wait\", waits
assert me[0][\"wall_ns\"] <= ($t1 - $t0) * 1e9, (me[0], $t1 - $t0)
# the groups hold every row: their totals add up to the total
assert d[\"groups\"] == len(d[\"processes\"]), d
assert sum(g[\"total_ns\"] for g in d[\"processes\"]) == d[\"backend_ns\"], d
p = me[0]
assert p[\"type\"] == \"client backend\" and p[\"user\"] == \"postgres\", p
assert p[\"database\"] == \"postgres\", p
assert p[\"idle_ns\"] == idle[0][\"wait_ns\"], (p, idle)
assert p[\"total_ns\"] == p[\"wall_ns\"] - p[\"idle_ns\"], p
" <w2.json
'

test_expect_success '--include-idle counts the idle time in the totals' '
	trace_start w3.json wait --pg="$PGDATA" -j --include-idle &&
	psql -XAt -c "select 1" -c "\\! sleep 1" -c "select 2" >/dev/null &&
	trace_stop &&
	json_py "
cr = [r for r in d[\"waits\"] if r[\"wait_event\"] == \"ClientRead\"]
assert cr and cr[0][\"wait_s\"] >= 1.0, d[\"waits\"]
assert d[\"idle_included\"] and \"idle\" not in d, d.keys()
assert cr[0][\"kind\"] == \"idle\" and \"share_pct\" in cr[0] and d[\"idle_ns\"] >= 1e9, cr
assert d[\"rows\"] > len(d[\"waits\"]) or sum(r[\"wait_ns\"] for r in d[\"waits\"]) == d[\"backend_ns\"], d
" <w3.json
'

# The path of versions whose PgBackendStatus layout dbtap does not know, on this one.
test_expect_success '--usdt: the same from the probes: pg_sleep by statement, idle in transaction counted' '
	{ echo "begin;" && echo "\\! sleep 1" && echo "commit;"; } >u.sql &&
	sleeps_traced u1.json 5 u.sql --usdt &&
	! grep -q "PgBackendStatus" u1.json.err &&
	sleeps_check u1.json 5 &&
	json_py "
cr = [w for g in d[\"statements\"] for w in g[\"waits\"]
      if w[\"wait_event\"] == \"ClientRead\" and w[\"kind\"] == \"wait\"]
assert cr and sum(r[\"wait_s\"] for r in cr) >= 1.0, d[\"statements\"]
" <u1.json
'

# The extended protocol fires no query__start; its statement is read all the same.
test_expect_success 'pgbench -M prepared: the sleeps of the prepared statement, by statement' '
	echo "select pg_sleep(0.05);" >p.sql &&
	trace_start p1.json wait --pg="$PGDATA" -j --by query &&
	pgbench -n -M prepared -f p.sql -c 1 -t 6 >p.out 2>&1 &&
	trace_stop &&
	grep -q "^number of transactions actually processed: 6/6" p.out &&
	json_py "
sl = [dict(w, query=g[\"query\"]) for g in d[\"statements\"] for w in g[\"waits\"]
      if w[\"wait_event\"] == \"PgSleep\"]
assert len(sl) == 1 and sl[0][\"query\"] == \"select pg_sleep(\$1);\", sl
assert sl[0][\"count\"] == 6 and sl[0][\"wait_s\"] >= 0.3 * 0.98, sl
" <p1.json
'

# track_activities off: st_state is "disabled", the statement timestamp 0. The server's
# setting, reloaded, is the postmaster's, which the backends forked later inherit.
test_expect_success 'track_activities off: a warning, ClientRead in a transaction idle, sleeps by statement' '
	pg_sql "alter system set track_activities = off" && pg_sql "select pg_reload_conf()" &&
	test_when_finished "pg_sql \"alter system reset track_activities\" &&
		pg_sql \"select pg_reload_conf()\"" &&
	for i in $(seq 1 100); do
		test "$(psql -XAtc "show track_activities")" = off && break
		sleep 0.05
	done &&
	{ for i in 1 2; do echo "select pg_sleep(0.2);"; done &&
	  echo "begin;" && echo "\\! sleep 1" && echo "commit;"; } >ta.sql &&
	trace_start ta.json wait --pg="$PGDATA" -j --by query &&
	test_grep "^warning: track_activities is off" ta.json.err &&
	test_grep "^hint: " ta.json.err &&
	psql -XAt -f ta.sql >ta.out &&
	trace_stop &&
	json_py "
sl = [dict(w, query=g[\"query\"]) for g in d[\"statements\"] for w in g[\"waits\"]
      if w[\"wait_event\"] == \"PgSleep\"]
# the text is still read (debug_query_string): the sleeps keep their statement
assert len(sl) == 1 and sl[0][\"query\"] == \"select pg_sleep(\$1);\", sl
assert sl[0][\"count\"] == 2 and sl[0][\"wait_s\"] >= 0.4 * 0.98, sl
# the transaction state is not: the second in the transaction is idle
cr = [r for r in d[\"idle\"] if r[\"wait_event\"] == \"ClientRead\"]
assert cr and cr[0][\"wait_s\"] >= 1.0, d[\"idle\"]
counted = [w for g in d[\"statements\"] for w in g[\"waits\"] if w[\"wait_event\"] == \"ClientRead\"]
assert sum(w[\"wait_s\"] for w in counted) < 0.5, counted
" <ta.json
'

test_expect_success 'text report: the table with seconds, share, count, mean and max' '
	trace_start w4.txt wait --pg="$PGDATA" &&
	psql -XAt -c "select pg_sleep(0.3)" >/dev/null &&
	trace_stop &&
	test_grep "^TYPE  *EVENT  *SECONDS  *SHARE  *COUNT  *MEAN_MS  *MAX_MS" w4.txt &&
	test_grep "^Timeout  *PgSleep  *0\.3[0-9]*  *[0-9.]*%  *1  " w4.txt &&
	test_grep "^CPU  *on CPU " w4.txt &&
	test_grep "idle .* apart, not counted" w4.txt
'

# One backend waits ten short sleeps and one long one, under two statements; another
# backend sleeps at the same time. Four tracers watch the same seconds: the default
# order, --sort count, --sort max, and -t on the first backend.
test_expect_success 'four tracers over two backends: --sort wait_s|count|max, -t TID' '
	{ echo "select pg_backend_pid();" &&
	  echo "\\! while [ ! -f go ]; do sleep 0.05; done" &&
	  for i in $(seq 1 10); do echo "select pg_sleep(0.05);"; done &&
	  echo "select 1, pg_sleep(1);"; } >a.sql &&
	{ echo "select pg_backend_pid();" &&
	  echo "\\! while [ ! -f go ]; do sleep 0.05; done" &&
	  echo "select pg_sleep(0.5) as b;"; } >b.sql &&
	from=$(stat -c %s "$TRASH/pg/server.log") &&
	{ PGOPTIONS="-c log_min_duration_statement=0" psql -XAt -f a.sql >a.out 2>&1 & pa=$!; } &&
	{ psql -XAt -f b.sql >b.out 2>&1 & pb=$!; } &&
	wait_for_line a.out "^[0-9][0-9]*$" && wait_for_line b.out "^[0-9][0-9]*$" &&
	apid=$(sed -n 1p a.out) && bpid=$(sed -n 1p b.out) &&
	trace_start w1.json wait --pg="$PGDATA" -j --by query && t1=$TRACE_PID &&
	trace_start w2.json wait --pg="$PGDATA" -j --by query --sort count && t2=$TRACE_PID &&
	trace_start w3.json wait --pg="$PGDATA" -j --by query --sort max && t3=$TRACE_PID &&
	trace_start w4.json wait -t $apid -j --by pid && t4=$TRACE_PID &&
	touch go && wait $pa && wait $pb &&
	for t in $t1 $t2 $t3; do TRACE_PID=$t && trace_stop || return 1; done &&
	# -t ends by itself when its backend exits (psql is done)
	TRACE_PID=$t4 && trace_wait &&
	logged=$(logged_sleeps $from 11 "select pg_sleep(0.05);" "select 1, pg_sleep(1);") &&
	json_py "assert d[\"end\"] == \"target exited\", d[\"end\"]" <w4.json &&
	for f in 1 2 3; do
		json_py "
def key(g, k):
    ws = g[\"waits\"]
    n = sum(w[\"count\"] for w in ws)
    return {\"wait_s\": g[\"total_ns\"], \"count\": n, \"mean\": g[\"total_ns\"] / n if n else 0,
            \"max\": max((w[\"max_us\"] or 0) for w in ws)}[k]
k = d[\"sort\"]
gs = d[\"statements\"]
vals = [key(g, k) for g in gs]
# the groups come largest first by the key asked for
assert vals == sorted(vals, reverse=True), (k, vals)
mine = (\"select pg_sleep(\$1);\", \"select \$1, pg_sleep(\$2);\")
top = [g[\"query\"] for g in gs if g[\"query\"] in mine][0]
# ten short sleeps: most waits; the long one: most time and the longest wait
want = {\"count\": \"select pg_sleep(\$1);\", \"wait_s\": \"select \$1, pg_sleep(\$2);\",
        \"max\": \"select \$1, pg_sleep(\$2);\"}[k]
assert top == want, (k, [(g[\"query\"], key(g, k)) for g in gs])
" <w$f.json || return 1
	done &&
	json_py "
assert [p[\"pid\"] for p in d[\"processes\"]] == [$apid], (d[\"processes\"], $bpid)
p = d[\"processes\"][0]
sl = [w for w in p[\"waits\"] if w[\"wait_event\"] == \"PgSleep\"]
# all eleven of its sleeps, none of the other backend: at least the 1.5 s asked, at
# most the time the eleven statements took by the clock of the server
assert len(sl) == 1 and sl[0][\"count\"] == 11, sl
assert 1.5 <= sl[0][\"wait_s\"] <= $logged * 1.001, (sl, $logged)
" <w4.json
'

test_expect_success 'bad input: --by, --top, --sort, -t, -o without --stacks, an argument, a non-server pid' '
	test_expect_code 2 dbtap wait --pg="$PGDATA" --by nothing 2>e1 &&
	test_grep "^error: unknown --by '"'nothing'"'" e1 && test_grep "^hint: --by takes event" e1 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" --top 0 2>e2 && test_grep "^hint: " e2 &&
	test_expect_code 2 dbtap wait -t $$ 2>e3 && test_grep "^hint: " e3 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" --sort nosuch 2>e10 &&
	test_grep "^error: unknown --sort key '"'nosuch'"'" e10 && test_grep "^hint: --sort takes wait_s" e10 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" -o x.folded 2>e4 && test_grep "^hint: add --stacks" e4 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" --stacks -o x.svgz 2>e5 && test_grep "^hint: " e5 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" --stacks 2>e9 && test_grep "^hint: " e9 &&
	test_expect_code 2 dbtap wait --pg="$PGDATA" extra 2>e6 && test_grep "^error: unexpected argument '"'extra'"'" e6 &&
	test_expect_code 2 dbtap wait -p $$ 2>e7 && test_grep "^error: pid $$ is not a PostgreSQL server process" e7 &&
	test_grep "^hint: " e7 &&
	test_expect_code 2 dbtap wait --pg=/nonexistent 2>e8 && test_grep "^hint: " e8
'

# Other tracers may run on the machine: ours are the programs the tracer holds. On a
# server whose PgBackendStatus layout dbtap knows (15, 16) it holds on_switch alone: no
# program at a USDT probe, nothing trapped; on others the probes' programs too.
test_expect_success 'cleanup: every program gone after SIGTERM and SIGINT' '
	for sig in TERM INT; do
		trace_start w5.json wait --pg="$PGDATA" -j -i 0.2 &&
		if grep -q "statements from PgBackendStatus" w5.json.err; then
			want="{\"on_switch\"} == names"
		else
			want="{\"on_switch\", \"query_start\", \"event_multi\"} <= names"
		fi &&
		case $("$PG_BINDIR"/postgres --version) in
		*" 15."* | *" 16."*) test_grep "statements from PgBackendStatus" w5.json.err ;;
		esac &&
		bpftool -j prog show >progs.json &&
		ids=$(python3 -c "
import json, os, re
# the programs this tracer holds (its fds): other wait tracers may run beside it
held = set()
for fd in os.listdir(\"/proc/$TRACE_PID/fdinfo\"):
    try:
        m = re.search(r\"^prog_id:\\s*(\\d+)\", open(\"/proc/$TRACE_PID/fdinfo/\" + fd).read(), re.M)
    except OSError:
        continue
    if m:
        held.add(int(m.group(1)))
progs = json.load(open(\"progs.json\"))
ours = [p for p in progs if p[\"id\"] in held]
names = {p[\"name\"] for p in ours}
assert $want, ours
print(\" \".join(str(p[\"id\"]) for p in ours))") &&
		test -n "$ids" &&
		trace_stop $sig &&
		# the kernel frees a program after an RCU grace period, not at once
		for id in $ids; do
			for i in $(seq 1 40); do
				bpftool prog show id $id >/dev/null 2>&1 || break
				sleep 0.05
			done
			! bpftool prog show id $id >/dev/null 2>&1 || return 1
		done &&
		json_py "assert d[\"report\"] == \"summary\" and lines[0][\"report\"] == \"interval\"" <w5.json || return 1
	done
'

test_expect_success 'the cluster stopping mid-run: a final report, a warning, exit 0' '
	pg_start other "autovacuum = off" &&
	trace_start w6.json wait --pg="$PGDATA" -j &&
	pg_sql "select 1" >/dev/null &&
	pg_stop other &&
	trace_wait &&
	test_grep "exited; stopping" w6.json.err &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"target exited\" and d[\"processes\"], d" <w6.json &&
	pg_use pg
'

test_done
