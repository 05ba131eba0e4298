#!/bin/bash
test_description='dbtap profile --timeline --pg: transactions, statements and checkpoints as spans at the times the server says'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/bpfobj.sh

pg_start || test_bail "cannot start a test cluster"

# Each transaction records its own clock (clock_timestamp(), the server's wall clock)
# just after it began and just before it ends.
txn_script() {
	local i
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

test_expect_success 'N transactions of one backend: N spans, at the times it recorded; statements with their text; the checkpoint' '
	trace_start tl.json profile --timeline --pg "$PGDATA" -j &&
	bpf_objs_of $TRACE_PID >objs &&
	txn_script 5 | psql -XAtq -v ON_ERROR_STOP=1 -F " " -f - >rec.out &&
	trace_stop &&
	bpf_objs_gone objs &&
	json_py "
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
# the statements between them and of the start of the backend
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
cps = [s for t in d[\"threads\"] for s in t[\"spans\"] if s[\"kind\"] == \"checkpoint\"]
assert len(cps) == 1, cps
c0, c1 = base + cps[0][\"start_s\"], base + cps[0][\"end_s\"]
assert ck[0] - eps <= c0 <= c1 <= ck[1] + eps, (ck, c0, c1)
assert [t[\"type\"] for t in d[\"threads\"] if cps[0] in t[\"spans\"]] == [\"checkpointer\"]
assert d[\"lost\"][\"marks_ring_full\"] == 0
" <tl.json
'

test_expect_success 'an aborted transaction is a span marked aborted' '
	trace_start tl2.json profile --timeline --pg "$PGDATA" -j --no-statements &&
	psql -XAtq -c "BEGIN" -c "SELECT pg_backend_pid()" -c "SELECT 1/0" -c "ROLLBACK" >pid2.out 2>/dev/null;
	trace_stop &&
	json_py "
pid = int(open(\"pid2.out\").read().split()[0])
rows = [t for t in d[\"threads\"] if t[\"pid\"] == pid]
txns = [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"transaction\"]
# the start of the backend runs a transaction of its own; then the one that failed
assert [s[\"aborted\"] for s in txns][-1:] == [True] and sum(s[\"aborted\"] for s in txns) == 1, txns
assert not [s for s in rows[0][\"spans\"] if s[\"kind\"] == \"statement\"]
" <tl2.json
'

test_done
