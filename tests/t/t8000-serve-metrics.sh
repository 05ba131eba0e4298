#!/bin/bash
test_description='dbtap serve: /metrics against pgbench, psql, txid_current() and lo_create()'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/serve.sh

test_expect_success 'bad options: exit 2, the input named, a hint' '
	test_expect_code 2 dbtap serve --listen nowhere 2>e1 &&
	test_grep "bad --listen .nowhere." e1 && test_grep "^hint: " e1 &&
	test_expect_code 2 dbtap serve --buckets 0.1,0.01 2>e2 &&
	test_grep "bad --buckets .0.1,0.01." e2 && test_grep "^hint: " e2 &&
	test_expect_code 2 dbtap serve --collect tps,cpu 2>e3 &&
	test_grep "bad --collect .tps,cpu.: .cpu. is not a collector" e3 && test_grep "^hint: " e3 &&
	test_expect_code 2 dbtap serve --pg /nonexistent 2>e4 &&
	test_grep "./nonexistent. is not a PostgreSQL data directory" e4 && test_grep "^hint: " e4 &&
	test_expect_code 2 dbtap serve --max-series 0 2>e5 &&
	test_grep "bad --max-series .0." e5 &&
	test_expect_code 2 dbtap serve --textfile /nonexistent 2>e6 &&
	test_grep "is not a directory" e6 &&
	test_expect_code 2 dbtap serve stray 2>e7 &&
	test_grep "unexpected argument .stray." e7 &&
	test_expect_code 2 dbtap serve --request-timeout 0 2>e9 &&
	test_grep "bad --request-timeout .0." e9 && test_grep "^hint: .*whole number" e9
'

test_expect_success 'a port in use: exit 1 with a hint, nothing left listening' '
	python3 -c "
import socket, time, sys
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
time.sleep(5)
" >port.txt &
	holder=$! &&
	for i in $(seq 1 50); do test -s port.txt && break; sleep 0.1; done &&
	test_expect_code 1 dbtap serve --listen 127.0.0.1:$(cat port.txt) 2>e8 &&
	test_grep "cannot listen on .127.0.0.1:$(cat port.txt)." e8 && test_grep "^hint: " e8 &&
	kill $holder
'

test_expect_success 'set up a cluster (no autovacuum) and a bench database' '
	pg_start pg "autovacuum = off" &&
	PG_LOG=$TRASH/pg/server.log &&
	test -f "$PG_LOG" &&
	pg_sql "create database bench" &&
	echo "select 1;" >one.sql &&
	echo "select 1/0;" >fail.sql
'

test_expect_success 'serve attaches to the cluster given and serves promtool-clean metrics' '
	serve_start serve.err --pg "$PGDATA" &&
	test_grep "^serving cluster $(realpath "$PGDATA"):$PGPORT" serve.err &&
	scrape m0.txt &&
	cluster="$(realpath "$PGDATA"):$PGPORT" &&
	metrics_py "
assert get(\"dbtap_up\", cluster=\"$cluster\") == 1
assert get(\"dbtap_clusters\") == 1
assert get(\"dbtap_probes_attached\", cluster=\"$cluster\") >= 5
" <m0.txt
'

test_expect_success 'transactions: commits = pgbench processed + one per connection, aborts = failed' '
	scrape before.txt &&
	pgbench -n -f one.sql -c 3 -t 500 bench >bench1.out 2>&1 &&
	processed=$(sed -n "s/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p" bench1.out) &&
	test "$processed" = 1500 &&
	for i in 1 2 3 4 5; do test_must_fail psql -XAtq -d bench -c "select 1/0" 2>/dev/null; done &&
	scrape after.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\", database=\"bench\", user=\"postgres\", backend_type=\"client backend\")
before = $(metrics_py "print(int(get(\"dbtap_transactions_total\", database=\"bench\") or 0))" <before.txt)
after = get(\"dbtap_transactions_total\", **c)
# pgbench: 3 clients and one connection of its own; psql: 5 connections; each commits
# one transaction while it starts up (InitPostgres)
assert after - before == $processed + 4 + 5, (before, after)
assert get(\"dbtap_transaction_aborts_total\", **c) == 5
" <after.txt
'

test_expect_success 'transaction histogram: cumulative buckets, +Inf = _count, _sum in seconds' '
	metrics_py "
b = [(float(l[\"le\"]), v) for n, l, v in m if n == \"dbtap_transaction_duration_seconds_bucket\"]
assert b and b[-1][0] == float(\"inf\"), b
assert all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), b
count = get(\"dbtap_transaction_duration_seconds_count\", cluster=\"$cluster\")
assert b[-1][1] == count and count >= 1500 + 9 + 5, (b, count)
s = get(\"dbtap_transaction_duration_seconds_sum\", cluster=\"$cluster\")
# select 1 in a transaction takes microseconds, not seconds
assert 0 < s / count < 0.05, (s, count)
# the default bounds moved to the kernel buckets edges: within 1/64 of 1 ms, 10 ms
les = [x for x, _ in b]
assert any(abs(x - 0.001) / 0.001 < 1 / 64 for x in les), les
assert any(abs(x - 0.01) / 0.01 < 1 / 64 for x in les), les
" <after.txt
'

# hist_py 'PYTHON' < F: metrics_py with buckets(name, **labels), the (le, count) pairs
# of one histogram, checked cumulative and ending in +Inf = _count, and quantile(q,
# name, **labels), histogram_quantile's interpolation within the bucket (Prometheus's
# rule), and bucket_of(x, name, **labels), the (lower, upper) bounds of x's bucket.
hist_py() {
	metrics_py "
def buckets(name, **kw):
    b = sorted((float(l[\"le\"]), v) for n, l, v in m if n == name + \"_bucket\" and
               all(l.get(k) == x for k, x in kw.items()))
    assert b and b[-1][0] == float(\"inf\"), (name, kw, b)
    assert all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), b
    assert b[-1][1] == get(name + \"_count\", **kw), (b, get(name + \"_count\", **kw))
    return b
def quantile(q, name, **kw):
    b = buckets(name, **kw)
    rank, lo, below = q * b[-1][1], 0.0, 0
    for le, c in b:
        if c >= rank:
            return lo if le == float(\"inf\") else lo + (le - lo) * (rank - below) / (c - below)
        lo, below = le, c
def bucket_of(x, name, **kw):
    les = [le for le, c in buckets(name, **kw)]
    return max([le for le in les if le < x], default=0), min(le for le in les if le >= x)
$1"
}

# logged_median FROM N TEXT: the median, in seconds, of the durations the server
# logged (log_min_duration_statement = 0) for the statement TEXT in its log past byte
# FROM, after checking there are N of them. The server's own clock, not the client's:
# pgbench's latency adds its round trip and its own wake-ups, which on a loaded
# machine put its median a bucket above the statements' (10 -> 25 ms at load 20).
logged_median() {
	python3 -c "
import sys
log = open(\"$PG_LOG\", \"rb\")
log.seek($1)
lat = sorted(float(l.split(\"duration: \")[1].split(\" ms\")[0])
             for l in log.read().decode(errors=\"replace\").splitlines()
             if \"duration: \" in l and l.endswith(\"  statement: \" + sys.argv[1]))
assert len(lat) == $2, (len(lat), lat)
print(lat[len(lat) // 2] / 1e3)" "$3"
}

log_size() {
	stat -c %s "$PG_LOG"
}

test_expect_success 'statements: the normalized text as a label, count = what was sent' '
	echo "select pg_sleep(0.001);" >sleep.sql &&
	pgbench -n -f sleep.sql -c 1 -t 50 bench >bench2.out 2>&1 &&
	echo "select pg_sleep(0.015), 1;" >sleep15.sql &&
	from=$(log_size) &&
	PGOPTIONS="-c log_min_duration_statement=0" \
		pgbench -n -f sleep15.sql -c 1 -t 40 bench >bench3.out 2>&1 &&
	median=$(logged_median $from 40 "select pg_sleep(0.015), 1;") &&
	scrape s.txt &&
	hist_py "
s = dict(cluster=\"$cluster\", statement=\"select pg_sleep(\$1);\")
assert get(\"dbtap_statement_seconds_count\", **s) == 50, m
mean = get(\"dbtap_statement_seconds_sum\", **s) / 50
assert 0.001 <= mean < 0.1, mean
# pg_sleep(0.001) sleeps at least 1 ms: nothing below
assert all(c == 0 for le, c in buckets(\"dbtap_statement_seconds\", **s) if le < 0.00098), m
# a statement of its own: histogram_quantile(0.5) lies in the bucket of the median of
# the 40 as the server timed them (15 ms of sleep)
s15 = dict(cluster=\"$cluster\", statement=\"select pg_sleep(\$1), \$2;\")
assert get(\"dbtap_statement_seconds_count\", **s15) == 40, m
lo, hi = bucket_of($median, \"dbtap_statement_seconds\", **s15)
q = quantile(0.5, \"dbtap_statement_seconds\", **s15)
print(\"median\", $median, \"bucket\", lo, hi, \"quantile\", q)
assert lo <= q <= hi, (lo, q, hi)
# one.sql ran 1500 times, as select \$1
sel = dict(cluster=\"$cluster\", statement=\"select \$1;\")
assert get(\"dbtap_statement_seconds_count\", **sel) == 1500
buckets(\"dbtap_statement_seconds\", **sel)
buckets(\"dbtap_statement_seconds\", cluster=\"$cluster\", statement=\"other\")
# every statement is in a series or in other: the sum is that of the label sets
series = total(\"dbtap_statement_seconds_count\", cluster=\"$cluster\")
assert series == total(\"dbtap_statement_duration_seconds_count\", cluster=\"$cluster\"), series
" <s.txt
'

test_expect_success 'per database and user: each label set counts what its clients ran' '
	pg_sql "create role alice login" && pg_sql "create role bob login" &&
	pg_sql "create database db_a owner alice" && pg_sql "create database db_b owner bob" &&
	pg_sql "alter role bob set log_min_duration_statement = 0" &&
	test_when_finished "pg_sql \"alter role bob reset log_min_duration_statement\"" &&
	from=$(log_size) &&
	{ pgbench -n -U alice -f one.sql -c 2 -t 300 db_a >a.out 2>&1 & apid=$!; } &&
	pgbench -n -U bob -f sleep15.sql -c 1 -t 40 db_b >b.out 2>&1 &&
	wait $apid &&
	grep -q "actually processed: 600/600" a.out && grep -q "actually processed: 40/40" b.out &&
	median=$(logged_median $from 40 "select pg_sleep(0.015), 1;") &&
	scrape l1.txt &&
	hist_py "
a = dict(cluster=\"$cluster\", database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
b = dict(cluster=\"$cluster\", database=\"db_b\", user=\"bob\", backend_type=\"client backend\")
# transactions: the script, plus one per connection (InitPostgres): pgbench opens
# one of its own besides each client
assert get(\"dbtap_transactions_total\", **a) == 600 + 3, get(\"dbtap_transactions_total\", **a)
assert get(\"dbtap_transactions_total\", **b) == 40 + 2, get(\"dbtap_transactions_total\", **b)
# every one of them started after attach: all timed, all in the histogram
assert get(\"dbtap_transaction_duration_seconds_count\", **a) == 603
assert get(\"dbtap_transaction_duration_seconds_count\", **b) == 42
# statements: pgbench -n sends its script and nothing else
assert get(\"dbtap_statement_duration_seconds_count\", **a) == 600, get(\"dbtap_statement_duration_seconds_count\", **a)
assert get(\"dbtap_statement_duration_seconds_count\", **b) == 40, get(\"dbtap_statement_duration_seconds_count\", **b)
# 40 sleeps of at least 15 ms
assert get(\"dbtap_statement_duration_seconds_sum\", **b) >= 0.6
assert get(\"dbtap_transaction_duration_seconds_sum\", **b) >= 0.6
for name in (\"dbtap_transaction_duration_seconds\", \"dbtap_statement_duration_seconds\"):
    lo, hi = bucket_of($median, name, **b)
    q = quantile(0.5, name, **b)
    print(name, \"median\", $median, \"bucket\", lo, hi, \"quantile\", q)
    assert lo <= q <= hi, (name, lo, q, hi)
    # select 1 takes microseconds: the median of a lies below that bucket
    qa = quantile(0.5, name, **a)
    assert qa < lo, (name, qa, lo)
" <l1.txt
'

test_expect_success 'counters never go back while backends exit (pgbench -C), each scrape promtool-clean' '
	pgbench -n -C -U alice -f one.sql -c 2 -T 5 db_a >c.out 2>&1 &
	cpid=$! &&
	n=0 ok=true &&
	while kill -0 $cpid 2>/dev/null; do
		n=$((n + 1)) && scrape mono.$n.txt || ok=false
		sleep 0.2
	done &&
	$ok && wait $cpid &&
	processed=$(sed -n "s/^number of transactions actually processed: \([0-9]*\).*/\1/p" c.out) &&
	test "$processed" -gt 10 &&
	scrape mono.end.txt &&
	python3 -c "
import re, sys
def load(f):
    d = {}
    for line in open(f):
        if line.startswith(\"#\") or not line.strip():
            continue
        k, v = line.rsplit(\" \", 1)
        d[k] = float(v)
    return d
files = [\"l1.txt\"] + [\"mono.%d.txt\" % i for i in range(1, $n + 1)] + [\"mono.end.txt\"]
snaps = [load(f) for f in files]
mono = re.compile(r\"^dbtap_(transaction|statement)\w*(_total|_count|_sum|_bucket)\\{\")
checked = 0
for f0, a, f1, b in zip(files, snaps, files[1:], snaps[1:]):
    for k, v in a.items():
        if mono.match(k):
            assert k in b, (f1, k)
            assert b[k] >= v, (f0, f1, k, v, b[k])
            checked += 1
print(len(files), \"scrapes,\", checked, \"samples compared\")
assert checked > 1000
" &&
	cat l1.txt mono.end.txt | metrics_py "
a = dict(cluster=\"$cluster\", database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
t = pick(\"dbtap_transactions_total\", **a)
h = pick(\"dbtap_transaction_duration_seconds_count\", **a)
st = pick(\"dbtap_statement_duration_seconds_count\", **a)
# -C: a connection per transaction, each with its InitPostgres one, and one of pgbench
assert t[1] - t[0] == 2 * $processed + 1, (t, $processed)
assert h[1] - h[0] == 2 * $processed + 1, (h, $processed)
assert st[1] - st[0] == $processed, (st, $processed)
"
'

# Entries of the maps named $1 that serve holds (/proc/PID/fdinfo: map_id), summed.
map_entries() {
	local id n=0
	for id in $(grep -h "^map_id:" /proc/$SERVE_PID/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool -j map show id "$id" | grep -q "\"name\":\"$1\"" || continue
		n=$((n + $(bpftool -j map dump id "$id" | python3 -c "import json, sys; print(len(json.load(sys.stdin)))")))
	done
	echo $n
}

test_expect_success 'the histograms of exited backends leave the kernel maps' '
	# a session that ran a statement and stays: its entries stay
	{ (echo "select 1;"; sleep 4) | psql -XAtq -d bench >/dev/null & hold=$!; } &&
	sleep 1.5 &&
	live=$(pg_sql "select count(*) from pg_stat_activity where backend_type = \$\$client backend\$\$") &&
	n=$(map_entries bk_hists) &&
	echo "map entries: $n, client backends: $live" &&
	wait $hold &&
	# one entry per live backend in each of the two programs, none of the hundreds gone
	test "$n" -ge 2 && test "$n" -le $((2 * live))
'

test_expect_success 'XIDs: the counter is txid_current() + 1; wraparound from datfrozenxid' '
	x=$(pg_sql "select txid_current()") &&
	age=$(pg_sql "select max(age(datfrozenxid)) from pg_database") &&
	# serve reads the counter once a second: until it has read it past that XID
	scrape_until x.txt "(get(\"dbtap_xids_assigned_total\", cluster=\"$cluster\") or 0) > $x" &&
	metrics_py "
c = dict(cluster=\"$cluster\")
assert get(\"dbtap_xids_assigned_total\", **c) == $x + 1, (get(\"dbtap_xids_assigned_total\", **c), $x)
# xidWrapLimit = oldest datfrozenxid + 2^31 - 1; age() counts from the next XID
wrap = get(\"dbtap_xids_until_wraparound\", **c)
assert wrap == 2**31 - 1 - $age, (wrap, $age)
stop = get(\"dbtap_xids_until_stop\", **c)
assert 0 < stop < wrap, (stop, wrap)
h = get(\"dbtap_xid_wraparound_horizon_seconds\", **c)
assert h is not None and h > 0, h
" <x.txt
'

test_expect_success 'OIDs: lo_create(0) x 100 moves the counter by 100' '
	scrape o0.txt &&
	pg_sql "select lo_create(0) from generate_series(1, 100)" >oids.txt &&
	test $(($(tail -n1 oids.txt) - $(head -n1 oids.txt))) = 99 &&
	o0=$(metrics_py "print(get(\"dbtap_oids_assigned_total\", cluster=\"$cluster\"))" <o0.txt) &&
	scrape_until o1.txt "get(\"dbtap_oids_assigned_total\", cluster=\"$cluster\") >= $o0 + 100" &&
	cat o0.txt o1.txt | metrics_py "
v = pick(\"dbtap_oids_assigned_total\", cluster=\"$cluster\")
assert len(v) == 2 and v[1] - v[0] == 100, v
"
'

test_expect_success 'OpenMetrics when asked: content type, families without _total, # EOF' '
	scrape om.txt "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5" &&
	grep -qi "^content-type: application/openmetrics-text; version=1.0.0" om.txt.headers &&
	test_grep "^# TYPE dbtap_transactions counter" om.txt &&
	test_grep "^dbtap_transactions_total{" om.txt &&
	test_grep "^# UNIT dbtap_transaction_duration_seconds seconds" om.txt &&
	scrape text.txt "text/plain;version=0.0.4" &&
	test_grep "^# TYPE dbtap_transactions_total counter" text.txt &&
	grep -qi "^content-type: text/plain; version=0.0.4" text.txt.headers
'

test_expect_success 'HTTP: / links to /metrics; other paths 404, other methods 405' '
	curl -sS -f "http://$SERVE_ADDR/" >index.html &&
	test_grep "href=\"/metrics\"" index.html &&
	test "$(curl -s -o /dev/null -w "%{http_code}" "http://$SERVE_ADDR/debug")" = 404 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -X POST "http://$SERVE_ADDR/metrics")" = 405 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -I "http://$SERVE_ADDR/metrics")" = 200
'

# BPF program ids process $1 holds fds of (/proc/PID/fdinfo says prog_id).
progs_of() {
	grep -h "^prog_id:" /proc/$1/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u
}

test_expect_success 'capabilities: all but BPF, PERFMON, SYS_PTRACE, DAC_READ_SEARCH dropped' '
	grep "^CapEff:" /proc/$SERVE_PID/status >caps.txt &&
	test_grep "000000c000080004" caps.txt &&
	grep "^CapBnd:" /proc/$SERVE_PID/status >bnd.txt &&
	test_grep "000000c000080004" bnd.txt &&
	grep "^NoNewPrivs:" /proc/$SERVE_PID/status | grep -q 1
'

test_expect_success 'BPF run time: each program'"'"'s run_cnt and run_time_ns as bpftool reads them' '
	pgbench -n -f one.sql -c 1 -t 100 bench >/dev/null 2>&1 &&
	for id in $(progs_of $SERVE_PID); do bpftool -j prog show id $id; echo; done >before.json &&
	scrape bpf.txt &&
	for id in $(progs_of $SERVE_PID); do bpftool -j prog show id $id; echo; done >after.json &&
	metrics_py "
import json
def load(f):
    return {p[\"name\"]: p for p in map(json.loads, filter(str.strip, open(f)))}
b, a = load(\"before.json\"), load(\"after.json\")
n = 0
for name, l, v in m:
    if name not in (\"dbtap_bpf_runs_total\", \"dbtap_bpf_run_seconds_total\") or l[\"cluster\"] != \"$cluster\":
        continue
    p = l[\"program\"][:15]
    key, got = (\"run_cnt\", v) if name == \"dbtap_bpf_runs_total\" else (\"run_time_ns\", round(v * 1e9))
    # the kernel counts on between the reads (other servers run the same binary)
    assert b[p].get(key, 0) <= got <= a[p].get(key, 0), (name, p, b[p].get(key), got, a[p].get(key))
    n += 1
# the transaction probes ran: 100 transactions, a start and a commit each
assert get(\"dbtap_bpf_runs_total\", cluster=\"$cluster\", program=\"tx_multi\") >= 200, m
assert get(\"dbtap_bpf_run_seconds_total\", cluster=\"$cluster\", program=\"tx_multi\") > 0
assert n >= 6, n
" <bpf.txt
'

test_expect_success 'SIGTERM: exit 0, none of its BPF programs left' '
	progs_of $SERVE_PID >ids.txt &&
	test $(wc -l <ids.txt) -ge 3 &&
	serve_stop &&
	# the kernel frees a detached program after an RCU grace period: allow it a moment
	for i in $(seq 1 50); do
		left=$(for id in $(cat ids.txt); do bpftool prog show id $id >/dev/null 2>&1 && echo $id; done)
		test -z "$left" && break
		sleep 0.1
	done &&
	test -z "$left"
'

test_expect_success '--max-series 2: two statement series, the rest in other, nothing lost' '
	serve_start capped.err --pg "$PGDATA" --max-series 2 --collect latency &&
	pgbench -n -f one.sql -c 1 -t 20 bench >/dev/null 2>&1 &&
	pgbench -n -f sleep.sql -c 1 -t 5 bench >/dev/null 2>&1 &&
	pg_sql "select 2" >/dev/null && pg_sql "select 3, 4" >/dev/null &&
	scrape capped.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\")
st = [l[\"statement\"] for n, l, v in m if n == \"dbtap_statement_seconds_count\"]
assert len(st) == 3 and st[-1] == \"other\", st
assert total(\"dbtap_statement_seconds_count\", **c) == total(\"dbtap_statement_duration_seconds_count\", **c)
assert get(\"dbtap_statement_seconds_count\", statement=\"other\", **c) >= 2, m
# no tps collector asked for: no transaction series
assert not pick(\"dbtap_transactions_total\"), m
" <capped.txt &&
	serve_stop
'

# Without tps, the kernel keeps each backend's title beside its statement histogram:
# with -C every backend exits right after its one statement, before serve's next read.
test_expect_success '--collect latency alone: backends that exit at once keep their labels (pgbench -C)' '
	serve_start lonly.err --pg "$PGDATA" --collect latency &&
	{ pgbench -n -C -U alice -f one.sql -c 2 -t 100 db_a >la.out 2>&1 & apid=$!; } &&
	pgbench -n -C -U bob -f one.sql -c 1 -t 100 db_b >lb.out 2>&1 &&
	wait $apid &&
	grep -q "actually processed: 200/200" la.out && grep -q "actually processed: 100/100" lb.out &&
	scrape lonly.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\")
sets = [l for n, l, v in m if n == \"dbtap_statement_duration_seconds_count\"]
for l in sets:
    assert \"exited\" not in l.values() and \"unknown\" not in l.values(), (l, sets)
a = dict(c, database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
b = dict(c, database=\"db_b\", user=\"bob\", backend_type=\"client backend\")
# pgbench -n sends its script and nothing else, over a connection each
assert get(\"dbtap_statement_duration_seconds_count\", **a) == 200, sets
assert get(\"dbtap_statement_duration_seconds_count\", **b) == 100, sets
assert total(\"dbtap_statement_duration_seconds_count\", **c) == 300, sets
assert total(\"dbtap_statement_seconds_count\", **c) == 300
" <lonly.txt &&
	# the histograms and titles of exited backends leave the kernel: a backend first
	# seen at one read (once a second) is found gone at the next; nothing runs now
	for i in $(seq 1 20); do
		n=$(map_entries bk_hists) && t=$(map_entries bk_titles) &&
		test "$n$t" = 00 && break
		sleep 0.25
	done &&
	echo "map entries: $n histograms, $t titles" &&
	test "$n" = 0 && test "$t" = 0 &&
	serve_stop
'

# tps and latency load on two threads at once, latency set to take the backends' titles
# from tps's map; when tps fails, latency is opened again keeping them itself.
# DBTAP_TEST_FAIL_LOAD makes tps's load fail as a refusal by the kernel would.
test_expect_success 'tps refused: latency still labels backends that exit at once, messages in order' '
	DBTAP_TEST_FAIL_LOAD=tps serve_start nots.err --pg "$PGDATA" &&
	pgbench -n -C -U alice -f one.sql -c 1 -t 40 db_a >na.out 2>&1 &&
	grep -q "actually processed: 40/40" na.out &&
	scrape nots.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\")
a = dict(c, database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
assert get(\"dbtap_statement_duration_seconds_count\", **a) == 40, m
assert not pick(\"dbtap_transactions_total\"), m
" <nots.txt &&
	serve_stop &&
	grep "^error: \|^hint: \|^warning: " nots.err >said &&
	cat >want <<-EOF &&
	error: cannot load the tps BPF program: Operation not permitted
	hint: run as root; '"'"'dbtap -v tps ...'"'"' shows the verifier'"'"'s log
	warning: cluster $(realpath "$PGDATA"):$PGPORT: transactions are not collected
	EOF
	test_cmp want said
'

# latency on its thread beside the counters, no tps asked for: it keeps the titles itself.
test_expect_success '--collect latency,watch: backends that exit at once keep their labels, latency loaded once' '
	DBTAP_PHASES=1 serve_start lw.err --pg "$PGDATA" --collect latency,watch &&
	pgbench -n -C -U alice -f one.sql -c 1 -t 20 db_a >lw.out 2>&1 &&
	grep -q "actually processed: 20/20" lw.out &&
	scrape lw.txt &&
	metrics_py "
a = dict(cluster=\"$cluster\", database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
assert get(\"dbtap_statement_duration_seconds_count\", **a) == 20, m
assert (get(\"dbtap_xids_assigned_total\", cluster=\"$cluster\") or 0) > 0, m
" <lw.txt &&
	serve_stop &&
	test "$(grep -c "\"phase\":\"load\"" lw.err)" = 1
'

# The attach runs in a child process; what it says on a thread that holds its messages
# comes back with the links and is printed in its place, after tps's.
test_expect_success 'latency refused at attach: its error, then the warning; tps still counts' '
	DBTAP_TEST_FAIL_ATTACH=transaction__abort serve_start noat.err --pg "$PGDATA" &&
	pgbench -n -U alice -f one.sql -c 1 -t 20 db_a >nb.out 2>&1 &&
	grep -q "actually processed: 20/20" nb.out &&
	scrape noat.txt &&
	metrics_py "
a = dict(cluster=\"$cluster\", database=\"db_a\", user=\"alice\", backend_type=\"client backend\")
# 1 client and one connection of its own: each commits one as it starts
assert get(\"dbtap_transactions_total\", **a) == 20 + 2, m
assert not pick(\"dbtap_statement_duration_seconds_count\"), m
" <noat.txt &&
	serve_stop &&
	grep "^error: \|^hint: \|^warning: " noat.err >said &&
	sed -n 1p said | sed "s|in .*: Operation|in BINARY: Operation|" >got1 &&
	echo "error: cannot attach to usdt:postgresql:transaction__abort in BINARY: Operation not permitted" >want1 &&
	test_cmp want1 got1 &&
	sed -n "2,\$p" said >got2 &&
	cat >want2 <<-EOF &&
	hint: run as root
	warning: cluster $(realpath "$PGDATA"):$PGPORT: statement latency is not collected
	EOF
	test_cmp want2 got2
'

test_expect_success '--max-series 2: two label sets, the rest summed in other, nothing lost' '
	serve_start lcap.err --pg "$PGDATA" --max-series 2 --collect tps &&
	# each label set seen by serve before the next one runs: the first two get series
	pgbench -n -U alice -f one.sql -c 1 -t 30 db_a >/dev/null 2>&1 &&
	scrape_until lcap_a.txt "get(\"dbtap_transactions_total\", database=\"db_a\", user=\"alice\") is not None" &&
	pgbench -n -U bob -f one.sql -c 1 -t 20 db_b >/dev/null 2>&1 &&
	scrape_until lcap_b.txt "get(\"dbtap_transactions_total\", database=\"db_b\", user=\"bob\") is not None" &&
	pgbench -n -f one.sql -c 1 -t 10 bench >/dev/null 2>&1 &&
	scrape lcap.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\")
sets = [(l[\"database\"], l[\"user\"], l[\"backend_type\"]) for n, l, v in m if n == \"dbtap_transactions_total\"]
assert sets == [(\"db_a\", \"alice\", \"client backend\"), (\"db_b\", \"bob\", \"client backend\"),
                (\"other\", \"other\", \"other\")], sets
o = dict(c, database=\"other\", user=\"other\", backend_type=\"other\")
# each run: its transactions and one per connection (two connections)
assert get(\"dbtap_transactions_total\", **o) == 10 + 2, m
assert total(\"dbtap_transactions_total\", **c) == 32 + 22 + 12
assert get(\"dbtap_transaction_duration_seconds_count\", **o) == 12
assert total(\"dbtap_transaction_duration_seconds_count\", **c) == 32 + 22 + 12
" <lcap.txt &&
	serve_stop
'

test_expect_success '--textfile -i 0.2: DIR/dbtap.prom every 0.2 s, by rename, never seen half-written' '
	mkdir tf tfcopies &&
	serve_start tf.err --pg "$PGDATA" --textfile tf -i 0.2 --collect watch &&
	for i in $(seq 1 50); do test -s tf/dbtap.prom && break; sleep 0.1; done &&
	# a reader as node_exporter is: every read a whole file, each write a new inode;
	# inotify counts the renames onto dbtap.prom over 5 s: one every 0.2 s, the first
	# and last whole interval of the window may each add or lose one
	python3 -c "
import ctypes, os, struct, time
libc = ctypes.CDLL(None, use_errno=True)
ino = libc.inotify_init1(os.O_NONBLOCK)
assert ino >= 0 and libc.inotify_add_watch(ino, b\"tf\", 0x80) >= 0  # IN_MOVED_TO
inodes, texts, reads, renames, t0 = set(), set(), 0, 0, time.monotonic()
while time.monotonic() - t0 < 5:
    with open(\"tf/dbtap.prom\") as f:
        i = os.fstat(f.fileno()).st_ino
        s = f.read()
    assert s.startswith(\"# HELP \") and s.endswith(\"} 1\\n\"), s[-200:]
    assert s.splitlines()[-1].startswith(\"dbtap_build_info{\"), s[-200:]
    inodes.add(i)
    if s not in texts:  # each write differs (dbtap_scrapes_total): a copy of each seen
        texts.add(s)
        open(\"tfcopies/%d.prom\" % len(texts), \"w\").write(s)
    reads += 1
    try:
        buf = os.read(ino, 65536)
    except BlockingIOError:
        buf = b\"\"
    off = 0
    while off < len(buf):
        wd, mask, cookie, ln = struct.unpack_from(\"iIII\", buf, off)
        renames += buf[off + 16:off + 16 + ln].rstrip(b\"\\0\") == b\"dbtap.prom\"
        off += 16 + ln
    time.sleep(0.005)
print(reads, \"reads,\", len(texts), \"files,\", len(inodes), \"inodes,\", renames, \"renames in 5 s\")
assert reads > 100, reads
assert 24 <= renames <= 26, renames
assert len(inodes) >= 2 and len(texts) >= 10, (len(inodes), len(texts))
" &&
	bad=$(for f in tfcopies/*.prom; do promtool check metrics <"$f" >/dev/null 2>&1 || echo "$f"; done) &&
	test -z "$bad" &&
	test_grep "^dbtap_xids_assigned_total{" tf/dbtap.prom &&
	serve_stop &&
	ls -A tf >files.txt &&
	echo dbtap.prom >expect.txt &&
	test_cmp expect.txt files.txt
'

test_expect_success 'every address: a warning says so; 127.0.0.1 is the default' '
	"$DBTAP" serve --pg "$PGDATA" --collect watch -d 0.5 >dflt.out 2>dflt.err &&
	test_grep "^serving http://127.0.0.1:9187/metrics" dflt.err ||
		test_grep "cannot listen on .127.0.0.1:9187." dflt.err &&
	serve_start all.err --pg "$PGDATA" --listen 0.0.0.0:0 --collect watch &&
	test_grep "^warning: listening on every address (0.0.0.0:" all.err &&
	serve_stop &&
	serve_start any.err --pg "$PGDATA" --listen :0 --collect watch &&
	test_grep "^warning: listening on every address (" any.err &&
	serve_stop &&
	serve_start lo.err --pg "$PGDATA" --collect watch &&
	test_must_fail grep -q "^warning: listening on every address" lo.err &&
	serve_stop
'

# The next transaction id without assigning one: xmax of the current snapshot.
next_xid() {
	pg_sql "select pg_snapshot_xmax(pg_current_snapshot())"
}

test_expect_success 'XID wraparound horizon: +Inf while no XID is assigned, then XIDs left / rate' '
	t0=$(date +%s.%N) &&
	serve_start h.err --pg "$PGDATA" --collect watch &&
	x0=$(next_xid) &&
	sleep 2.2 &&
	scrape h0.txt &&
	x1=$(next_xid) &&
	echo "select txid_current();" >xid.sql &&
	pgbench -n -f xid.sql -c 1 -t 300 bench >/dev/null 2>&1 &&
	sleep 1.2 &&
	scrape h1.txt &&
	x2=$(next_xid) &&
	t1=$(date +%s.%N) &&
	metrics_py "
c = dict(cluster=\"$cluster\")
if $x1 == $x0:
    assert get(\"dbtap_xid_wraparound_horizon_seconds\", **c) == float(\"inf\"), m
" <h0.txt &&
	metrics_py "
c = dict(cluster=\"$cluster\")
h, stop = get(\"dbtap_xid_wraparound_horizon_seconds\", **c), get(\"dbtap_xids_until_stop\", **c)
# the rate is over the samples since serve started (under a minute): the XIDs
# assigned between them, at least the 300, over at most the time serve has run
assigned = $x2 - $x0
assert 300 <= assigned <= 300 + 5, assigned
print(\"horizon\", h, \"s; until stop\", stop, \"; at most\", stop * ($t1 - $t0) / 300)
assert 0 < h <= stop * ($t1 - $t0) / 300, (h, stop)
" <h1.txt &&
	serve_stop
'

test_expect_success '--rescan 0: only CAP_BPF is kept' '
	serve_start r0.err --pg "$PGDATA" --rescan 0 &&
	grep "^CapEff:" /proc/$SERVE_PID/status >caps0.txt &&
	test_grep "0000008000000000" caps0.txt &&
	scrape r0.txt &&
	metrics_py "assert get(\"dbtap_up\", cluster=\"$cluster\") == 1" <r0.txt &&
	serve_stop
'

test_expect_success '--user nobody: runs as nobody and still reads its maps' '
	serve_start nobody.err --pg "$PGDATA" --user nobody &&
	test "$(awk "/^Uid:/ {print \$2}" /proc/$SERVE_PID/status)" = "$(id -u nobody)" &&
	pgbench -n -f one.sql -c 1 -t 10 bench >/dev/null 2>&1 &&
	scrape nobody.txt &&
	metrics_py "
assert get(\"dbtap_transactions_total\", cluster=\"$cluster\", database=\"bench\", user=\"postgres\", backend_type=\"client backend\") == 12
" <nobody.txt &&
	serve_stop
'

# CPU time of the postmaster's reaped children (cutime + cstime), in seconds.
children_cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($16 + $17) / hz }' "/proc/$PG_PID/stat"
}

test_expect_success '--collect stat: a backend CPU time = what the postmaster reaps of it' '
	serve_start stat.err --pg "$PGDATA" --collect stat &&
	sleep 1.2 &&
	scrape c0.txt &&
	c0=$(children_cpu_s) &&
	psql -XAtq -d bench -c "select count(*) from generate_series(1, 4000000)" \
		-c "select pg_sleep(1.5)" >/dev/null &&
	sleep 1.5 &&
	c1=$(children_cpu_s) &&
	scrape c1.txt &&
	cat c0.txt c1.txt | metrics_py "
v = pick(\"dbtap_backend_cpu_seconds_total\", cluster=\"$cluster\", backend_type=\"client backend\")
truth = $c1 - $c0
got = v[-1] - (v[0] if len(v) == 2 else 0)
print(\"serve\", got, \"reaped\", truth)
# ticks of 1/CLK_TCK s against nanoseconds, and the last second before the exit unseen
assert truth > 0.2 and abs(got - truth) <= 0.05 + 0.05 * truth, (got, truth)
assert pick(\"dbtap_backend_cpu_seconds_total\", cluster=\"$cluster\", backend_type=\"checkpointer\")
assert pick(\"dbtap_backend_context_switches_total\", cluster=\"$cluster\", backend_type=\"client backend\", kind=\"voluntary\")[-1] >= 1
assert pick(\"dbtap_backend_page_faults_total\", cluster=\"$cluster\", backend_type=\"client backend\", kind=\"minor\")[-1] > 0
" &&
	serve_stop
'

test_expect_success '--collect wait: pg_sleep time under Timeout:PgSleep, as long as the sleeps' '
	serve_start wait.err --pg "$PGDATA" --collect wait &&
	scrape w0.txt &&
	psql -XAtq -d bench -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" >/dev/null &&
	t0=$(date +%s.%N) &&
	printf "begin;\nselect 1;\n\\\\! sleep 1\ncommit;\n" | psql -XAtq -d bench >/dev/null &&
	t1=$(date +%s.%N) &&
	scrape w1.txt &&
	cat w0.txt w1.txt | metrics_py "
v = pick(\"dbtap_wait_seconds_total\", cluster=\"$cluster\", backend_type=\"client backend\",
         wait_event_type=\"Timeout\", wait_event=\"PgSleep\")
assert len(v) == 1, v
# pg_sleep sleeps at least what it is asked, and wakes within milliseconds of it
assert 1.5 <= v[0] < 1.6, v
# the client sleeping inside a transaction: its backend waits for it in ClientRead,
# counted (idle in transaction), at least the sleep and at most the whole session
r = pick(\"dbtap_wait_seconds_total\", cluster=\"$cluster\", backend_type=\"client backend\",
         wait_event_type=\"Client\", wait_event=\"ClientRead\")
print(\"ClientRead in a transaction\", r, \"session\", $t1 - $t0)
assert len(r) == 1 and 1.0 <= r[0] <= $t1 - $t0, r
" &&
	metrics_py "
# PostgreSQL 15: the transaction state and the statements are read from PgBackendStatus
# at the switches, no USDT probe: the one probe is the sched_switch tracepoint
assert get(\"dbtap_probes_attached\", cluster=\"$cluster\") == 1
" <w1.txt &&
	metrics_py "
assert get(\"dbtap_events_lost_total\", cluster=\"$cluster\", reason=\"wait_map_full\") == 0
" <w1.txt &&
	serve_stop
'

test_expect_success 'docs/fleet.md: its recording rules and alerts pass promtool check rules' '
	python3 -c "
s = open(\"$TEST_ROOT/docs/fleet.md\").read()
block = s[s.index(\"    groups:\"):s.index(\"promtool check rules\")]
print(\"\\n\".join(l[4:] for l in block.split(\"\\n\") if l.startswith(\"    \") or not l))
" >rules.yml &&
	promtool check rules rules.yml >rules.out &&
	test_grep "SUCCESS: 15 rules found" rules.out
'

test_done
