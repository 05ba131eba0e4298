#!/bin/bash
test_description='dbtap latency: probe pairs on a workload, latency query on a cluster'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

W=$WORKLOADS/funcloop
[ -x "$W" ] || test_bail "$W is not built: run make"

test_expect_success 'uprobe -> uretprobe of a sleeping function: every call, none shorter than the sleep' '
	funcloop_start loop1.out -s 3000 40 &&
	trace_start l1.json latency -p $LOOP_PID -j --hist linear:0:10000:1000 \
		uprobe:$W:funcloop_work uretprobe:$W:funcloop_work &&
	kill -USR1 $LOOP_PID && funcloop_wait && trace_wait &&
	test_grep "^calls 40 " loop1.out &&
	json_py "
p = d[\"pairs\"][0]
assert p[\"count\"] == 40 and p[\"unmatched_ends\"] == 0, p
# usleep(3000) lasts at least 3 ms: nothing below the 3000 us bucket
assert all(h[\"low_us\"] >= 3000 for h in p[\"hist\"]), p[\"hist\"]
assert sum(h[\"count\"] for h in p[\"hist\"]) == 40, p[\"hist\"]
assert p[\"p50_us\"] >= 3000 * (1 - 1/64), p
assert d[\"pending\"] == 0, d
" <l1.json
'

test_expect_success 'USDT -> uprobe pair, and an END without START is counted as unmatched' '
	funcloop_start loop2.out 300 &&
	trace_start l2.json latency -p $LOOP_PID -j usdt:funcloop:tick uprobe:$W:funcloop_work &&
	kill -USR1 $LOOP_PID && funcloop_wait && trace_wait &&
	json_py "
p = d[\"pairs\"][0]
# work(0) runs before the first tick: one END without a START
assert p[\"count\"] == 299 and p[\"unmatched_ends\"] == 1, p
" <l2.json
'

test_expect_success 'bad input: START without END, wildcard START, too many pairs, --usdt with a pair' '
	test_expect_code 2 dbtap latency uprobe:$W:funcloop_work 2>e1 &&
	test_grep "^error: START '"'uprobe:$W:funcloop_work'"' has no END" e1 &&
	test_grep "^hint: give probes in pairs" e1 &&
	test_expect_code 2 dbtap latency "uprobe:$W:funcloop_*" uretprobe:$W:funcloop_work 2>e2 &&
	test_grep "matches 2 probes; START and END name one probe each" e2 &&
	test_expect_code 2 dbtap latency 2>e3 && test_grep "^hint: " e3 &&
	test_expect_code 2 dbtap latency -p $$ query extra 2>e4 && test_grep "after '"'query'"'" e4 &&
	test_expect_code 2 dbtap latency --usdt uprobe:$W:funcloop_work uretprobe:$W:funcloop_work 2>e6 &&
	test_grep "^error: --usdt needs '"'latency query'"'" e6 && test_grep "^hint: " e6
'

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off" "log_min_duration_statement = 0"
'

# stmttruth.py STATEMENTS: runs each line of STATEMENTS in one session and, after each,
# reads that backend's pg_stat_activity row from a second session: state_change -
# query_start in microseconds, the server's own measure of the statement just ended.
cat >stmttruth.py <<\EOF
import json, subprocess, sys

def session():
    return subprocess.Popen(["psql", "-XAtq"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)

def run(p, sql):
    p.stdin.write(sql + "\n\\echo @@done\n")
    p.stdin.flush()
    out = []
    for line in p.stdout:
        if line.rstrip("\n") == "@@done":
            return out
        out.append(line.rstrip("\n"))
    raise SystemExit("psql ended early")

a, b = session(), session()
pid = int(run(a, "select pg_backend_pid();")[0])
rows = []
for sql in (l.strip() for l in open(sys.argv[1])):
    if not sql:
        continue
    run(a, sql)
    r = run(b, "select (extract(epoch from state_change - query_start) * 1000000)::bigint, state"
               " from pg_stat_activity where pid = %d;" % pid)[0].split("|")
    rows.append({"sql": sql, "us": int(r[0]), "state": r[1]})
def switches(p):
    # the backend's voluntary context switches so far, by the kernel's count (the
    # involuntary ones, preemptions, are not looked at where socket reads are)
    bpid = int(run(p, "select pg_backend_pid();")[0])
    st = dict(l.split(":", 1) for l in open("/proc/%d/status" % bpid))
    return int(st["voluntary_ctxt_switches"])
sw = switches(a) + switches(b)
a.stdin.close(); b.stdin.close(); a.wait(); b.wait()
json.dump({"pid": pid, "rows": rows, "switches": sw}, sys.stdout)
EOF

# quitfast.py SQL: one statement and the Terminate message sent in one write, so the
# backend finds Terminate waiting and exits without waiting for its client again.
cat >quitfast.py <<\EOF
import os, socket, struct, sys

s = socket.socket(socket.AF_UNIX)
s.connect("%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
params = b"user\0postgres\0database\0postgres\0\0"
s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
buf = b""
while b"Z\0\0\0\5" not in buf:       # ReadyForQuery: trust authentication went through
    chunk = s.recv(4096)
    if not chunk:
        raise SystemExit("connection closed during start-up")
    buf += chunk
q = sys.argv[1].encode() + b"\0"
s.sendall(b"Q" + struct.pack("!i", 4 + len(q)) + q + b"X" + struct.pack("!i", 4))
while s.recv(4096):
    pass
EOF

# The statements of the truth run: sleeps, a mixed set, a transaction block, an error.
{ for i in 1 2 3; do echo "select pg_sleep(0.2);"; done &&
  for i in 1 2 3; do echo "select count(*) from generate_series(1, 20000);"; done &&
  echo "begin;" && echo "select 1;" && echo "select 3;" && echo "commit;" &&
  echo "select 1/0;" && echo "select 2;"; } >truth.sql

# Every latency query test runs both paths on the same statements at once: the default
# (PgBackendStatus, on this server) into NAME.json and --usdt into NAME--usdt.json.
SIDE_PIDS=()
SIDE_OUTS=()
test_atexit 'for p in "${SIDE_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done'

# both_start NAME ARGS...: dbtap ARGS twice, the second with --usdt (NAME.json and
# NAME--usdt.json, new files), started at once; returns when every dbtap both_start
# started is attached (its "tracing" line), at once with BOTH_NOWAIT=1 (both_attached
# waits then). both_stop stops them all.
both_start() {
	local name=$1
	shift
	"$DBTAP" "$@" --usdt >"$name--usdt.json" 2>"$name--usdt.json.err" </dev/null &
	SIDE_PIDS+=("$!")
	SIDE_OUTS+=("$name--usdt.json")
	"$DBTAP" "$@" >"$name.json" 2>"$name.json.err" </dev/null &
	SIDE_PIDS+=("$!")
	SIDE_OUTS+=("$name.json")
	test -n "$BOTH_NOWAIT" || both_attached
}

both_attached() {
	local i p o all
	for i in $(seq 1 1200); do
		all=1
		for o in "${SIDE_OUTS[@]}"; do
			grep -q -e '^tracing ' "$o.err" || all=0
		done
		test $all = 1 && return 0
		for p in "${SIDE_PIDS[@]}"; do
			kill -0 "$p" 2>/dev/null && continue
			echo "a dbtap exited before attaching:"
			for o in "${SIDE_OUTS[@]}"; do cat "$o.err"; done
			return 1
		done
		sleep 0.05
	done
	echo "not attached after 60 s"
	return 1
}

# both_stop: Ctrl-C to every tracer both_start started, their statuses.
both_stop() {
	local p rc=0
	kill -INT "${SIDE_PIDS[@]}" || rc=1
	for p in "${SIDE_PIDS[@]}"; do
		wait "$p" || rc=$?
	done
	SIDE_PIDS=()
	SIDE_OUTS=()
	return $rc
}

# check_both NAME PYTHON: PYTHON (json_py's d and lines) on both files, with path set
# ("" or "--usdt") and statements_from checked.
check_both() {
	local p
	for p in "" --usdt; do
		json_py "path = \"$p\"
assert d[\"statements_from\"] == (\"usdt\" if path else \"pg_backend_status\"), d
$2" <"$1$p.json" || return 1
	done
}

test_expect_success "latency query, both paths: successful statements counted, literals hidden, errors leave no entry" '
	{ echo "select pg_backend_pid();" &&
	  for i in 1 2 3 4 5; do echo "select $i, '"'secret-$i'"';"; done &&
	  for i in 1 2 3; do echo "select 1/0;"; done &&
	  echo "select pg_sleep(0.3);" &&
	  echo "select 42;"; } >q.sql &&
	both_start l3 latency --pg="$PGDATA" -j query &&
	psql -XAt -f q.sql >q.out 2>q.err;
	both_stop &&
	test "$(grep -c "division by zero" q.err)" = 3 &&
	pid=$(sed -n 1p q.out) &&
	check_both l3 "
pid = $pid
p = d[\"pairs\"][0]
# 1 + 5 + sleep + 42 succeed; the 3 failing statements have no query__done
assert p[\"count\"] == 8, p
assert d[\"pending\"] == 0, d
top = {t[\"query\"]: t[\"count\"] for t in d[\"statements\"]}
assert top == {\"select pg_backend_pid();\": 1, \"select \$1, \$2;\": 5,
               \"select pg_sleep(\$1);\": 1, \"select \$1;\": 1}, top
assert not any(\"secret\" in q for q in top), top
assert d[\"statements\"][0][\"query\"] == \"select pg_sleep(\$1);\", d[\"statements\"]
me = [x for x in d[\"processes\"] if x[\"pid\"] == pid]
assert len(me) == 1 and me[0][\"count\"] == 8, d[\"processes\"]
assert me[0][\"type\"] == \"client backend\" and me[0][\"database\"] == \"postgres\", me
assert d[\"statements_count\"] == 4 and d[\"report\"] == \"summary\", d
"
'

test_expect_success "latency query, both paths: an errored statement does not pair with the next statement (no poisoning)" '
	{ echo "select 1/0;" && echo "\\! sleep 0.4" && echo "select 7;"; } >p.sql &&
	both_start l4 latency --pg="$PGDATA" -j query &&
	psql -XAt -f p.sql >p.out 2>p.err;
	both_stop &&
	check_both l4 "
p = d[\"pairs\"][0]
assert p[\"count\"] == 1, p
# select 7 pairs with its own start, not with the failed statement 0.4 s earlier
assert p[\"max_us\"] < 400000, p
assert d[\"statements\"][0][\"count\"] == 1, d
"
'

test_expect_success "latency query, both paths: a backend that ends on an error: nothing counted, what stays pending" '
	both_start l5 latency --pg="$PGDATA" -j -i 0.2 query &&
	for i in $(seq 1 20); do echo "select 1/0;"; done | psql -XAt -f - >/dev/null 2>&1;
	both_stop &&
	check_both l5 "
p = d[\"pairs\"][0]
assert p[\"count\"] == 0, d
# --usdt: its last START, never ended; PgBackendStatus: nothing, the backend is gone
assert d[\"pending\"] == (1 if path else 0), d
"
'

# standard_conforming_strings off: 'secret\' is no string end; on: C:\tmp\ is one string.
# (\047 is a quote: the SQL cannot sit inside the quoted test body as it is)
test_expect_success "latency query, both paths: standard_conforming_strings off: a backslash hides no literal from redaction" '
	printf "%s\n" "set standard_conforming_strings = off;" \
		"select \047secret\\\\\047 password=hunter2 \047 as v;" \
		"select \047C:\\\\\\\\tmp\\\\\\\\\047 as path, \047x\047 as y;" \
		"set standard_conforming_strings = on;" \
		"select \047C:\\\\tmp\\\\\047 as path2, \047pw=hunter3\047 as z;" >scs.fmt &&
	printf "$(cat scs.fmt)\n" >scs.sql &&
	cat scs.sql &&
	both_start l7 latency --pg="$PGDATA" -j query &&
	psql -XAt -v ON_ERROR_STOP=1 -f scs.sql >scs.out 2>scs.err &&
	both_stop &&
	cat scs.out &&
	test_grep "password=hunter2" scs.out &&
	test_grep "^C:.tmp.|x$" scs.out &&
	check_both l7 "
top = [t[\"query\"] for t in d[\"statements\"]]
for q in top:
    for secret in (\"secret\", \"hunter\", \"tmp\", \"pw=\"):
        assert secret not in q, (secret, top)
assert \"select \$1\" in top, top
# the two sets and the three selects, each counted
assert sum(t[\"count\"] for t in d[\"statements\"]) == 5, d[\"statements\"]
"
'

test_expect_success "latency query, both paths: --raw-query shows the statement as sent" '
	both_start l6 latency --pg="$PGDATA" -j --raw-query query &&
	pg_sql "select '"'visible-literal'"'" >/dev/null &&
	both_stop &&
	check_both l6 "
top = [t[\"query\"] for t in d[\"statements\"]]
assert \"select '"'visible-literal'"'\" in top, top
"
'

test_expect_success "latency query, both paths: --top 1 --sort total|mean|count keeps the statement that leads by that key" '
	{ for i in $(seq 1 20); do echo "select $i;"; done &&
	  echo "select pg_sleep(0.1);" &&
	  for i in 1 2 3 4 5; do echo "select pg_sleep(0.03), $i;"; done; } >s.sql &&
	for k in total mean count; do
		BOTH_NOWAIT=1 both_start s-$k latency --pg="$PGDATA" -j query --top 1 --sort $k
	done &&
	both_attached &&
	psql -XAtq -f s.sql >/dev/null &&
	both_stop &&
	check_both s-total "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select pg_sleep(\$1), \$2;\", 5)], d" &&
	check_both s-mean "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select pg_sleep(\$1);\", 1)], d" &&
	check_both s-count "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select \$1;\", 20)], d" &&
	test_expect_code 2 dbtap latency --pg="$PGDATA" query --sort slowest 2>e5 &&
	test_grep "bad --sort '"'slowest'"'" e5 && test_grep "^hint: " e5
'

test_expect_success "latency query, both paths: --by database -i: every interval split, adding up to the statements psql sent" '
	pg_sql "create database d2" &&
	both_start b1 latency --pg="$PGDATA" -j -i 0.1 --by database query &&
	psql -XAtq -d d2 -f s.sql >/dev/null &&
	both_stop &&
	check_both b1 "
iv = [l for l in lines if l[\"report\"] == \"interval\"]
n = sum(x[\"count\"] for l in iv for x in l[\"databases\"] if x[\"database\"] == \"d2\")
assert n == 26, n          # 20 + 1 + 5 statements, all in d2
assert [x[\"count\"] for x in d[\"databases\"] if x[\"database\"] == \"d2\"] == [26], d
assert sum(x[\"count\"] for x in d[\"processes\"] if x[\"database\"] == \"d2\") == 26, d
"
'

test_expect_success "latency query, both paths: each statement counted once, its time against the server's own" '
	both_start t latency --pg="$PGDATA" -j query --top 50 &&
	python3 stmttruth.py truth.sql >truth.json &&
	both_stop &&
	cp "$TRASH/pg/server.log" log.txt &&
	cat >check.py <<-\EOF &&
	import json, re, sys
	d = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
	truth = json.load(open(sys.argv[2]))
	usdt = sys.argv[4] == "--usdt"
	def norm(q):
	    n = [0]
	    def f(m):
	        n[0] += 1
	        return "$%d" % n[0]
	    return re.sub(r"\b[0-9]+(\.[0-9]+)?\b", f, q)
	# the server log: duration lines of the session, one per statement that succeeded
	logged = {}
	for l in open(sys.argv[3]):
	    m = re.search(r"\[%d\] LOG:  duration: ([0-9.]+) ms  statement: (.*)$" % truth["pid"], l)
	    if m:
	        logged.setdefault(norm(m.group(2)), []).append(float(m.group(1)) * 1000)
	stmts = {s["query"]: s for s in d["statements"]}
	want = {}
	for r in truth["rows"]:
	    if r["sql"] != "select 1/0;":
	        want.setdefault(norm(r["sql"]), []).append(r["us"])
	assert set(want) <= set(logged), (want, logged)
	for q, us in sorted(want.items()):
	    s = stmts.get(q)
	    print("%-48s count %d/%d  total %.0f us, pg_stat_activity %d, log %.0f" % (
	        q, s["count"] if s else 0, len(us), s["total_us"] if s else 0, sum(us), sum(logged[q])))
	    assert s and s["count"] == len(us) == len(logged[q]), (q, s, us, logged[q])
	    if usdt:
	        # query__start fires after query_start is taken, query__done before the
	        # state changes (1 ms for the kernel clock against the server clock)
	        assert s["total_us"] <= sum(us) + 1000, (q, s, us)
	    else:
	        # exactly the server measure: state_change - query_start, in microseconds
	        assert abs(s["total_us"] - sum(us)) < 0.5 and s["max_us"] == max(us), (q, s, us)
	        # and no shorter than what it logged (its end is taken before the state changes)
	        assert s["total_us"] >= sum(logged[q]) - 0.5, (q, s, logged[q])
	assert stmts["select pg_sleep($1);"]["total_us"] >= 3 * 200000, stmts
	assert "select $1/$2;" not in stmts, stmts
	if not usdt:
	    # every switch-out of the two sessions that was no preemption, begun after the
	    # attach, was looked at (and those of the other processes of the cluster)
	    assert d["pairs"][0]["switches_looked"] >= truth["switches"], (d["pairs"], truth)
	EOF
	python3 check.py t.json truth.json log.txt "" &&
	python3 check.py t--usdt.json truth.json log.txt --usdt
'

test_expect_success "latency query, both paths: backends that exit right after their statement are counted" '
	both_start x latency --pg="$PGDATA" -j query &&
	for i in 1 2; do psql -XAtc "select pg_sleep(0.05) as exiting" >/dev/null || return 1; done &&
	python3 quitfast.py "select pg_sleep(0.05) as exiting" &&
	# the last backend may still be on its way out: wait for it to be gone
	for i in $(seq 1 100); do
		test "$(pg_sql "select count(*) from pg_stat_activity where backend_type = '"'client backend'"' and pid <> pg_backend_pid()")" = 0 && break
		sleep 0.05
	done &&
	both_stop &&
	check_both x "
p = d[\"pairs\"][0]
print(\"counted %d, %s at exit\" % (p[\"count\"], p.get(\"counted_at_exit\")))
s = [t for t in d[\"statements\"] if t[\"query\"] == \"select pg_sleep(\$1) as exiting\"]
assert len(s) == 1 and s[0][\"count\"] == 3, d[\"statements\"]
assert s[0][\"total_us\"] >= 3 * 50000, s
"
'

test_expect_success "latency query from PgBackendStatus: transactions and aborts against pgbench's count and txid_current()" '
	echo "select txid_current();" >w.sql &&
	{ echo "begin;" && echo "select txid_current();" && echo "commit;" &&
	  echo "begin;" && echo "select txid_current();" && echo "rollback;" &&
	  echo "begin;" && echo "select 1/0;" && echo "commit;" &&
	  echo "select 1/0;" &&
	  echo "select 1 \\; select txid_current();"; } >x.sql &&
	x0=$(pg_sql "select txid_current()") &&
	both_start tx latency --pg="$PGDATA" -j query &&
	pgbench -n -f w.sql -c 2 -t 100 >tx1.out 2>&1 &&
	pgbench -n -C -f w.sql -c 2 -t 50 >tx2.out 2>&1 &&
	psql -XAtq -f x.sql >x.out 2>x.err;
	both_stop &&
	x1=$(pg_sql "select txid_current()") &&
	test "$(grep -c "division by zero" x.err)" = 2 &&
	n1=$(sed -n "s/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p" tx1.out) &&
	n2=$(sed -n "s/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p" tx2.out) &&
	test "$n1" = 200 && test "$n2" = 100 &&
	json_py "
p = d[\"pairs\"][0]
# pgbench: every transaction, long-lived connections and -C alike, none of their
# start-up ones; psql: the committed block and the two statements of one message
assert p[\"transactions\"] == $n1 + $n2 + 2, p
# the rolled-back block, the block that failed (its COMMIT rolls back), the error
assert p[\"transaction_aborts\"] == 3, p
# every transaction but the rolled-back block wrote: one XID each, and x1 its own
assert p[\"transactions\"] == $x1 - $x0 - 1 - 1, (p, $x0, $x1)
" <tx.json &&
	json_py "assert \"transactions\" not in d[\"pairs\"][0], d" <tx--usdt.json
'

test_done
