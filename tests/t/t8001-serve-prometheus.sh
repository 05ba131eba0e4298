#!/bin/bash
test_description='dbtap serve scraped by a real Prometheus during pgbench; a cluster that starts and stops'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/serve.sh

command -v prometheus >/dev/null || test_skip_all "prometheus not found (make deps installs it)"

PROM_PID=
test_atexit '[ -n "$PROM_PID" ] && kill -KILL $PROM_PID'

# A free TCP port on 127.0.0.1 (the kernel's choice, released at once).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# promql QUERY [TIME]: the result vector of an instant query, as JSON.
promql() {
	curl -sS -f -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"}
}

# Starts Prometheus on prom.yml in the background; sets PROM_PID.
prom_start() {
	prometheus --config.file=prom.yml --storage.tsdb.path=promdata \
		--web.listen-address=127.0.0.1:$PROM_PORT >prom.log 2>&1 &
	PROM_PID=$!
}

# Starts cluster NAME again after pg_stop.
pg_restart() {
	pg_as_postgres "$PG_BINDIR/pg_ctl" -D "$TRASH/$1/data" -l "$TRASH/$1/server.log" -w -t 60 \
		start >/dev/null
}

test_expect_success 'set up cluster a (pgbench tables) and cluster b (stopped for now)' '
	pg_start b "autovacuum = off" &&
	pg_stop b &&
	pg_start a "autovacuum = off" &&
	pgbench -i -q -s 1 >init.out 2>&1 &&
	pg_sql "create role bob login" && pg_sql "create database slow owner bob" &&
	echo "select pg_sleep(0.05);" >sleep.sql &&
	echo "select pg_sleep(0.012);" >sleep12.sql
'

test_expect_success 'serve both; only a runs, so only a is served' '
	serve_start serve.err --pg "$TRASH/a/data" --pg "$TRASH/b/data" \
		--buckets 0.0005,0.001,0.002,0.005,0.01,0.02,0.04,0.06,0.1,0.2,0.5,1 &&
	A="$(realpath "$TRASH/a/data"):$(pg_use a && echo $PGPORT)" &&
	B="$(realpath "$TRASH/b/data"):$(pg_use b && echo $PGPORT)" &&
	scrape m0.txt &&
	metrics_py "
assert get(\"dbtap_up\", cluster=\"$A\") == 1
assert not [l for n, l, v in m if l.get(\"cluster\") == \"$B\"], m
" <m0.txt
'

test_expect_success 'Prometheus on 127.0.0.1, its own data dir, a 1 s scrape interval' '
	PROM_PORT=$(free_port) &&
	cat >prom.yml <<-EOF &&
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	scrape_configs:
	  - job_name: dbtap
	    static_configs:
	      - targets: ["$SERVE_ADDR"]
	EOF
	prom_start &&
	for i in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break
		sleep 0.2
	done &&
	curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null &&
	# ready comes first; targets are applied some seconds later: wait for a scrape
	for i in $(seq 1 100); do
		promql "up{job=\"dbtap\"}" >up.json &&
		grep -q "\"1\"\]" up.json && break
		sleep 0.2
	done &&
	test_grep "\"1\"\]" up.json
'

test_expect_success 'cluster b starts: its series appear within the rescan' '
	pg_restart b &&
	for i in $(seq 1 50); do
		scrape m1.txt &&
		grep -q "^dbtap_up{cluster=\"$B\"} 1" m1.txt && break
		sleep 0.2
	done &&
	test_grep "^dbtap_up{cluster=\"$B\"} 1" m1.txt &&
	test_grep "^serving cluster $B" serve.err
'

test_expect_success '15 s of pgbench on a, pg_sleep loops on a (database slow) and on b, scraped every second' '
	(pg_use b && pgbench -n -f sleep.sql -c 1 -T 17 -l --log-prefix=sleeplog >sleep.out 2>&1) &
	sleeper=$! &&
	{ (pg_use a && pgbench -n -U bob -f sleep12.sql -c 1 -T 17 -l --log-prefix=slowlog slow >slow.out 2>&1) &
	  slow=$!; } &&
	pg_use a &&
	# -R: a steady schedule (Poisson arrivals at 300/s); the log (-l) has the time each
	# transaction ended, to the microsecond
	pgbench -n -c 4 -T 15 -R 300 -l --log-prefix=txlog >bench.out 2>&1 &&
	wait $sleeper && wait $slow &&
	grep -q "^tps = " bench.out &&
	scrape m2.txt &&
	sleep 2
'

test_expect_success 'every scrape parsed: the target is up, with no error' '
	curl -sS -f "http://127.0.0.1:$PROM_PORT/api/v1/targets" >targets.json &&
	python3 -c "
import json
t = json.load(open(\"targets.json\"))[\"data\"][\"activeTargets\"]
assert len(t) == 1 and t[0][\"health\"] == \"up\" and not t[0][\"lastError\"], t
"
'

# rate_check DATABASE LOG_PREFIX T: sum(rate(dbtap_transactions_total[10s])) of cluster a's
# DATABASE at time T, against what pgbench logged (LOG_PREFIX.*) between the window's
# first and last samples.
rate_check() {
	local q="dbtap_transactions_total{cluster=\"$A\",database=\"$1\"}"
	promql "sum(rate($q[10s]))" $3 >rate.$1.json &&
	promql "$q[10s]" $3 >samples.$1.json &&
	python3 -c "
import glob, json
r = json.load(open(\"rate.$1.json\"))[\"data\"][\"result\"]
got = float(r[0][\"value\"][1])
# rate() divides the increase between the first and the last sample of the window by
# the time between them (and extrapolates that to the window): the truth is what
# pgbench logged as ended between those two scrapes, not over the whole 10 s, whose
# first and last fractions of a second no sample sees (pgbench falling behind its
# schedule on a loaded machine and catching up puts bursts there)
v = json.load(open(\"samples.$1.json\"))[\"data\"][\"result\"][0][\"values\"]
t0, t1 = float(v[0][0]), float(v[-1][0])
ends = [int(l.split()[4]) + int(l.split()[5]) / 1e6 for f in glob.glob(\"$2.*\") for l in open(f)]
truth = sum(1 for e in ends if t0 < e <= t1) / (t1 - t0)
print(\"$1: prometheus\", got, \"pgbench between the samples\", truth, len(v), \"samples over\",
      t1 - t0, \"s\")
assert len(v) >= 8, v
assert abs(got - truth) <= 0.05 * truth, (got, truth)
"
}

test_expect_success 'sum(rate(dbtap_transactions_total[10s])) per database within 5 % of the TPS pgbench logged in those seconds' '
	# the evaluation time: 13 s after the first second pgbench logged, so that the
	# window lies inside the run
	t=$(python3 -c "
import glob
print(min(int(l.split()[4]) for f in glob.glob(\"txlog.*\") for l in open(f)) + 13)") &&
	rate_check postgres txlog $t &&
	rate_check slow slowlog $t
'

test_expect_success 'histogram_quantile(0.5) of the pg_sleep(0.05) cluster: in the bucket of the true median' '
	t=$(python3 -c "
import glob
ts = [int(l.split()[4]) for f in glob.glob(\"sleeplog.*\") for l in open(f)]
print(sorted(ts)[len(ts) // 2])
") &&
	promql "histogram_quantile(0.5, sum by (le) (rate(dbtap_transaction_duration_seconds_bucket{cluster=\"$B\"}[10s])))" $t >q.json &&
	python3 -c "
import glob, json
# per transaction: client id, transaction no, latency us, script no, epoch s, us
lat = sorted(int(l.split()[2]) for f in glob.glob(\"sleeplog.*\") for l in open(f))
median = lat[len(lat) // 2] / 1e6
les = sorted({float(l.split(\"le=\\\"\")[1].split(\"\\\"\")[0]) for l in open(\"m2.txt\")
             if l.startswith(\"dbtap_transaction_duration_seconds_bucket\") and \"+Inf\" not in l})
lo = max([x for x in les if x < median], default=0)
hi = min(x for x in les if x >= median)
q = float(json.load(open(\"q.json\"))[\"data\"][\"result\"][0][\"value\"][1])
print(\"median\", median, \"bucket\", lo, hi, \"quantile\", q)
assert lo <= q <= hi, (median, lo, hi, q)
"
'

# median_of LOG_PREFIX: the median latency (s) of the transactions pgbench logged there.
median_of() {
	python3 -c "
import glob
lat = sorted(int(l.split()[2]) for f in glob.glob(\"$1.*\") for l in open(f))
print(lat[len(lat) // 2] / 1e6)"
}

# in_bucket QUERY MEDIAN: the instant QUERY at the end of the run lies in the bucket of
# the m2.txt bounds that holds MEDIAN.
in_bucket() {
	promql "$1" $(python3 -c "
import glob
print(max(int(l.split()[4]) for f in glob.glob(\"txlog.*\") for l in open(f)))") >ib.json &&
	python3 -c "
import json, sys
les = sorted({float(l.split(\"le=\\\"\")[1].split(\"\\\"\")[0]) for l in open(\"m2.txt\")
             if \"_bucket{\" in l and \"+Inf\" not in l})
lo = max([x for x in les if x < $2], default=0)
hi = min(x for x in les if x >= $2)
r = json.load(open(\"ib.json\"))[\"data\"][\"result\"]
assert len(r) == 1, r
q = float(r[0][\"value\"][1])
print(sys.argv[1], \"median\", $2, \"bucket\", lo, hi, \"quantile\", q)
assert lo <= q <= hi, ($2, lo, hi, q)
" "$1"
}

test_expect_success 'database slow of cluster a and the top statement of b: histogram_quantile(0.5) in the bucket of the median' '
	slow=$(median_of slowlog) &&
	sel="cluster=\"$A\",user=\"bob\",database=\"slow\"" &&
	in_bucket "histogram_quantile(0.5, sum by (le) (rate(dbtap_transaction_duration_seconds_bucket{$sel}[10s])))" $slow &&
	in_bucket "histogram_quantile(0.5, sum by (le) (rate(dbtap_statement_duration_seconds_bucket{$sel}[10s])))" $slow &&
	# the top statement series of b: its pg_sleep(0.05)
	in_bucket "histogram_quantile(0.5, sum by (le) (rate(dbtap_statement_seconds_bucket{cluster=\"$B\",statement=\"select pg_sleep(\$1);\"}[10s])))" $(median_of sleeplog)
'

test_expect_success 'cluster b stops: its series go from /metrics and from Prometheus' '
	pg_stop b &&
	for i in $(seq 1 50); do
		scrape m3.txt &&
		! grep -q "cluster=\"$B\"" m3.txt && break
		sleep 0.2
	done &&
	! grep -q "cluster=\"$B\"" m3.txt &&
	test_grep "^cluster $B stopped" serve.err &&
	sleep 2 &&
	promql "dbtap_up{cluster=\"$B\"}" >gone.json &&
	promql "dbtap_up{cluster=\"$A\"}" >still.json &&
	python3 -c "
import json
assert json.load(open(\"gone.json\"))[\"data\"][\"result\"] == []
assert len(json.load(open(\"still.json\"))[\"data\"][\"result\"]) == 1
"
'

test_expect_success 'stop Prometheus and serve' '
	kill $PROM_PID && wait $PROM_PID; PROM_PID= &&
	serve_stop
'

test_done
