#!/bin/bash
test_description='dbtap profile --timeline --pg: transactions, statements, checkpoints and waits as spans at the times the server says'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/bpfobj.sh

pg_start || test_bail "cannot start a test cluster"

# Each transaction records its own clock (clock_timestamp(), the server's wall clock)
# just after it began and just before it ends; the server logs each statement's
# duration as it measured it.
txn_script() {
	local i
	echo "SET log_min_duration_statement = 0;"
	for i in $(seq 1 $1); do
		echo "BEGIN;"
		echo "SELECT 'rec', pg_backend_pid(), extract(epoch from clock_timestamp());"
		echo "SELECT pg_sleep(0.05);"
		echo "SELECT 'rec', pg_backend_pid(), extract(epoch from clock_timestamp());"
		echo "COMMIT;"
		echo "SELECT pg_sleep(0.1);"
	done
	echo "SELECT 'ckpt', extract(epoch from clock_timestamp());"
	echo "CHECKPOINT;"
	echo "SELECT 'ckpt', extract(epoch from clock_timestamp());"
}

# Both ways of taking the markers side by side, over the same statements: read from
# PgBackendStatus at the switch-outs (the default on 15 and 16) and from the probes.
# tl_both OUT ARGS...: OUT.json and OUT-usdt.json; tl_both_stop ends both.
tl_both() {
	local out=$1
	shift
	trace_start "$out-usdt.json" profile --timeline --pg "$PGDATA" -j --usdt "$@" &&
	USDT_PID=$TRACE_PID &&
	trace_start "$out.json" profile --timeline --pg "$PGDATA" -j "$@"
}
tl_both_stop() {
	local rc
	trace_stop || return 1
	kill -INT "$USDT_PID" && wait "$USDT_PID"
	rc=$?
	USDT_PID=
	return $rc
}
USDT_PID=
test_atexit '[ -n "$USDT_PID" ] && kill -KILL "$USDT_PID" 2>/dev/null'

# the path each file says it took, as it is meant to on this server
marks_path_py='
import json
def check_path(d, usdt):
    assert d["markers_from"] == ("usdt" if usdt else "PgBackendStatus"), d["markers_from"]
'

test_expect_success 'N transactions of one backend: N spans, at the times it recorded; statements with their text, between the clock readings around them, at least as long as the server logged them; the checkpoint; both ways' '
	tl_both tl &&
	bpf_objs_of $TRACE_PID >objs &&
	bpf_objs_of $USDT_PID >uobjs &&
	txn_script 5 | psql -XAtq -v ON_ERROR_STOP=1 -F " " -f - >rec.out &&
	tl_both_stop &&
	bpf_objs_gone objs && bpf_objs_gone uobjs &&
	for f in tl tl-usdt; do
	json_py "$marks_path_py
import re
check_path(d, \"$f\" == \"tl-usdt\")
rec = [l.split() for l in open(\"rec.out\") if l.startswith(\"rec \")]
ck = [float(l.split()[1]) for l in open(\"rec.out\") if l.startswith(\"ckpt \")]
pid = int(rec[0][1])
times = [float(r[2]) for r in rec]
want = list(zip(times[0::2], times[1::2]))
assert len(want) == 5, want
base = d[\"start_realtime_s\"]
rows = [t for t in d[\"threads\"] if t[\"pid\"] == pid]
assert len(rows) == 1, rows
spans = rows[0][\"spans\"]
txns = [s for s in spans if s[\"kind\"] == \"transaction\"]
# each recorded transaction lies in exactly one span, which begins just before its first
# record and ends just after its last; the other spans are the implicit transactions of
# the statements between them (and with the probes, of the start of the backend)
eps = 0.01
used = set()
for r0, r1 in want:
    hit = [i for i, s in enumerate(txns) if base + s[\"start_s\"] <= r0 + eps and r1 <= base + s[\"end_s\"] + eps]
    assert len(hit) == 1, (r0, r1, hit)
    s = txns[hit[0]]
    a, b = base + s[\"start_s\"], base + s[\"end_s\"]
    assert r0 - a < 0.1 and b - r1 < 0.1 and not s[\"aborted\"], (a, r0, r1, b)
    used.add(hit[0])
assert len(used) == 5
sleeps = [s for s in spans if s[\"kind\"] == \"statement\" and s[\"query\"] == \"SELECT pg_sleep(\$1);\"]
assert len(sleeps) == 10, [s[\"query\"] for s in spans if s[\"kind\"] == \"statement\"]
# each between the clock readings of the statements around it: inside a transaction,
# or between one and the next (the last, before the reading of the checkpoint)
around = want + [(want[i][1], want[i + 1][0]) for i in range(4)] + [(want[4][1], ck[0])]
for (r0, r1), s in zip(around, sleeps[0::2] + sleeps[1::2]):
    assert r0 - eps <= base + s[\"start_s\"] < base + s[\"end_s\"] <= r1 + eps, (r0, s, r1)
# read from the row, each lasts at least what the server logged: the same start, to the
# microsecond, and its end at the idle report, after the log line
logged = [float(m.group(1)) / 1e3 for m in re.finditer(r\"\\[%d\\] LOG:  duration: ([0-9.]+) ms  statement: SELECT pg_sleep\" % pid, open(\"$PGDATA/../server.log\").read())]
assert len(logged) == 10, logged
for s, l in zip(sleeps, logged):
    assert \"$f\" == \"tl-usdt\" or s[\"end_s\"] - s[\"start_s\"] >= l - 2e-6, (s, l)
cps = [s for t in d[\"threads\"] for s in t[\"spans\"] if s[\"kind\"] == \"checkpoint\"]
assert len(cps) == 1, cps
c0, c1 = base + cps[0][\"start_s\"], base + cps[0][\"end_s\"]
assert ck[0] - eps <= c0 <= c1 <= ck[1] + eps, (ck, c0, c1)
assert [t[\"type\"] for t in d[\"threads\"] if cps[0] in t[\"spans\"]] == [\"checkpointer\"]
assert d[\"lost\"][\"marks_ring_full\"] == 0 and d[\"lost\"][\"marks_threads_full\"] == 0
" <$f.json || return 1
	done
'

test_expect_success 'aborted transactions are spans marked aborted: a failed block, a failed autocommit statement, a block rolled back; both ways' '
	tl_both tl2 --no-statements &&
	psql -XAtq -c "BEGIN" -c "SELECT pg_backend_pid()" -c "SELECT 1/0" -c "ROLLBACK" \
		-c "SELECT 1/0" -c "BEGIN" -c "SELECT 1" -c "ROLLBACK" >pid2.out 2>/dev/null;
	tl_both_stop &&
	for f in tl2 tl2-usdt; do
	json_py "$marks_path_py
check_path(d, \"$f\" == \"tl2-usdt\")
pid = int(open(\"pid2.out\").read().split()[0])
rows = [t for t in d[\"threads\"] if t[\"pid\"] == pid]
txns = [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"transaction\"]
# with the probes the start of the backend runs a transaction of its own; then the three
# that ended in an abort (read from the rows, transaction__abort says which)
assert [s[\"aborted\"] for s in txns][-3:] == [True] * 3 and sum(s[\"aborted\"] for s in txns) == 3, txns
assert len(txns) == 3 or \"$f\" == \"tl2-usdt\", txns
assert not [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"statement\"]
" <$f.json || return 1
	done
'

# N sleeps of one backend, each between two readings of the server's own clock.
sleep_script() {
	local i
	for i in $(seq 1 $1); do
		echo "SELECT 'sl', pg_backend_pid(), extract(epoch from clock_timestamp()), length(pg_sleep(0.3)::text), extract(epoch from clock_timestamp());"
	done
}

test_expect_success 'N pg_sleep(0.3) of one backend: N Timeout:PgSleep spans of 0.3 s, at the times it recorded; drawn in the SVG' '
	trace_start w.json profile --timeline --pg "$PGDATA" -j -o w.svg &&
	bpf_objs_of $TRACE_PID >wobjs &&
	sleep_script 4 | psql -XAtq -v ON_ERROR_STOP=1 -F " " -f - >sl.out &&
	trace_stop &&
	bpf_objs_gone wobjs &&
	json_py "
import xml.etree.ElementTree as ET
rec = [l.split() for l in open(\"sl.out\") if l.startswith(\"sl \")]
pid = int(rec[0][1])
want = [(float(r[2]), float(r[4])) for r in rec]
assert len(want) == 4, want
base = d[\"start_realtime_s\"]
rows = [t for t in d[\"threads\"] if t[\"pid\"] == pid]
assert len(rows) == 1, rows
sleeps = [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"wait\" and s[\"event\"] == \"Timeout:PgSleep\"]
assert len(sleeps) == 4, rows[0][\"spans\"]
eps = 0.01
for (r0, r1), s in zip(want, sleeps):
    a, b = base + s[\"start_s\"], base + s[\"end_s\"]
    # inside the two readings, as long as the sleep (within 10 ms of what the backend measured)
    assert r0 - eps <= a < b <= r1 + eps, (r0, a, b, r1)
    assert abs((b - a) - 0.3) <= eps or 0.3 - eps <= b - a <= (r1 - r0) + eps, (b - a, r1 - r0)
    assert not s[\"in_progress\"]
assert d[\"lost\"][\"waits_ring_full\"] == 0 and d[\"lost\"][\"waits_threads_full\"] == 0, d[\"lost\"]
svg = ET.parse(\"w.svg\").getroot()
ns = \"{http://www.w3.org/2000/svg}\"
g = [g for g in svg.iter(ns + \"g\") if g.get(\"data-pid\") == str(pid)]
assert len(g) == 1
drawn = [r for r in g[0].iter(ns + \"rect\") if r.get(\"data-kind\") == \"wait\"]
ds = [r for r in drawn if r.get(\"data-event\") == \"Timeout:PgSleep\"]
assert len(ds) == 4, [r.get(\"data-event\") for r in drawn]
for r, s in zip(ds, sleeps):
    assert abs(float(r.get(\"data-t0\")) - s[\"start_s\"]) < 1e-5, (r.attrib, s)
    t = r.find(ns + \"title\").text
    assert t.startswith(\"wait Timeout:PgSleep \") and \" ms)\" in t, t
" <w.json
'

# The blocked backend reads the server's clock just before and after its UPDATE, in one
# statement; the same UPDATE of a free row first, so that planning it is not in between.
blocked_sql="DO \$\$ DECLARE t0 float8; i int; BEGIN FOREACH i IN ARRAY '{2,1}'::int[] LOOP
t0 := extract(epoch from clock_timestamp());
UPDATE lk SET v = v + 1 WHERE id = i;
END LOOP;
RAISE NOTICE 'blocked % % %', pg_backend_pid(), t0, extract(epoch from clock_timestamp()); END \$\$"

# The holder keeps the row until the lock wait has lasted 1.5 s by the lock manager's
# own clock (pg_locks.waitstart), however late the blocked backend comes: a fixed hold
# from the holder's start left less than the deadlock check once starting the blocked
# psql took a second on a loaded machine. 30 s at most. It says when the wait began.
holder_sql="DO \$\$ DECLARE ws float8; BEGIN FOR n IN 1..600 LOOP
SELECT extract(epoch from waitstart) INTO ws FROM pg_locks WHERE NOT granted
	AND locktype = 'transactionid';
EXIT WHEN ws < extract(epoch from clock_timestamp()) - 1.5;
PERFORM pg_sleep(0.05);
END LOOP; RAISE NOTICE 'waitstart %', ws; END \$\$ /* holder */;"

# holder_holds: waits until the holder, its row lock taken, runs its loop.
holder_holds() {
	local i
	for i in $(seq 1 600); do
		test "$(psql -XAtq -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%/* holder */;'
			AND state = 'active' AND pid <> pg_backend_pid()")" = 1 && return 0
		sleep 0.05
	done
	echo "the holder never took its row"
	return 1
}

test_expect_success 'a row lock held 1.5 s past the wait start (the deadlock check at 1 s): one Lock:transactionid span on the blocked backend from the start of the wait the lock manager says to the commit of the holder, in the Firefox file' '
	psql -XAtq -c "CREATE TABLE lk (id int PRIMARY KEY, v int); INSERT INTO lk VALUES (1, 0), (2, 0)" &&
	trace_start l.json profile --timeline --pg "$PGDATA" -j -o l.json.gz &&
	bpf_objs_of $TRACE_PID >lobjs &&
	{ printf "%s\n" "BEGIN;" "UPDATE lk SET v = v + 1 WHERE id = 1;" "$holder_sql" \
		"SELECT '"'"'acommit'"'"', extract(epoch from clock_timestamp());" "COMMIT;" |
		psql -XAtq -v ON_ERROR_STOP=1 -F " " -f - >a.out 2>a.err & } &&
	holder=$! &&
	holder_holds &&
	psql -XAtq -c "$blocked_sql" 2>b.out &&
	wait $holder &&
	trace_stop &&
	bpf_objs_gone lobjs &&
	"$TEST_LIB"/gecko-check l.json.gz l.json &&
	json_py "
import gzip, json
b = open(\"b.out\").read().split(\"blocked \")[1].split()
pid, b0, b1 = int(b[0]), float(b[1]), float(b[2])
acommit = float(open(\"a.out\").read().split(\"acommit \")[1].split()[0])
assert b1 - b0 > 1.05, (\"blocked for less than the deadlock check\", b1 - b0)
base = d[\"start_realtime_s\"]
rows = [t for t in d[\"threads\"] if t[\"pid\"] == pid]
assert len(rows) == 1, rows
locks = [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"wait\" and s[\"event\"].startswith(\"Lock:\")]
assert len(locks) == 1 and locks[0][\"event\"] == \"Lock:transactionid\", locks
s = locks[0]
a, e = base + s[\"start_s\"], base + s[\"end_s\"]
eps = 0.01
# blocked from its UPDATE until the holder committed
assert b0 - eps <= a and acommit - eps <= e <= b1 + eps, (b0, a, acommit, e, b1)
# from when the lock manager says the wait began (pg_locks.waitstart, on the clock of
# the server: not moved by the time on CPU of the statement around it)
ws = float(open(\"a.err\").read().split(\"waitstart \")[1].split()[0])
assert abs(a - ws) <= eps, (a, ws)
p = json.load(gzip.open(\"l.json.gz\", \"rt\"))
cats = [c[\"name\"] for c in p[\"meta\"][\"categories\"]]
th = [t for t in p[\"threads\"] if t[\"pid\"] == pid][0]
mk = [m for m in th[\"markers\"][\"data\"] if m[5][\"type\"] == \"wait\" and m[5][\"event\"] == \"Lock:transactionid\"]
assert len(mk) == 1 and th[\"stringTable\"][mk[0][0]] == \"Lock:transactionid\", mk
assert cats[mk[0][4]] == \"Wait\", cats
assert abs(mk[0][1] / 1000 - s[\"start_s\"]) < 1e-4 and abs(mk[0][2] / 1000 - s[\"end_s\"]) < 1e-4
" <l.json
'

test_expect_success 'text: a line of waits under the row of a backend that slept' '
	trace_start wt.out profile --timeline --pg "$PGDATA" --top 50 &&
	sleep_script 2 | psql -XAtq -v ON_ERROR_STOP=1 -F " " -f - >sl2.out &&
	trace_stop &&
	test_grep "^waits: .L. Lock" wt.out &&
	pid=$(awk "NR == 1 { print \$2 }" sl2.out) &&
	# the row of that backend, whatever its label says it is by the end (an exited one too)
	grep -A2 -E "^[a-z][a-z ]* $pid " wt.out >row.out &&
	test_grep "^  waits  *[ w]*w" row.out &&
	# the background processes idle in their main loops: no waits (the Activity class)
	! grep -A2 "^walwriter" wt.out | grep "^  waits"
'

# pgmark's probes attach while the waits' program loads beside them: when that attach
# fails (DBTAP_TEST_FAIL_ATTACH makes it), its error is the command's, said once and
# nothing else, and the waits loaded meanwhile are closed with the rest.
test_expect_success 'markers refused at attach while the waits load beside them: that error alone, exit 1, no picture' '
	DBTAP_TEST_FAIL_ATTACH=transaction__abort test_expect_code 1 \
		dbtap profile --timeline --pg "$PGDATA" -d 1 -o refused.svg 2>refused.err &&
	cat >want <<-EOF &&
	error: cannot attach to usdt:postgresql:transaction__abort in BINARY: Operation not permitted
	hint: run as root
	EOF
	sed "s|in .*: Operation|in BINARY: Operation|" refused.err >got &&
	test_cmp want got &&
	! test -e refused.svg
'

test_done
