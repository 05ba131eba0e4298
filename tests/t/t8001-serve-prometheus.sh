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
	echo "select pg_sleep(0.05);" >sleep.sql
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

test_expect_success '15 s of pgbench on a, a pg_sleep(0.05) loop on b, scraped every second' '
	(pg_use b && pgbench -n -f sleep.sql -c 1 -T 17 -l --log-prefix=sleeplog >sleep.out 2>&1) &
	sleeper=$! &&
	pg_use a &&
	# -R: a steady schedule (Poisson arrivals at 300/s); the per-second log (-l
	# --aggregate-interval=1) is the count pgbench makes of each second
	pgbench -n -c 4 -T 15 -R 300 -l --aggregate-interval=1 --log-prefix=agg >bench.out 2>&1 &&
	wait $sleeper &&
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

test_expect_success 'sum(rate(dbtap_transactions_total[10s])) within 5 % of the TPS pgbench logged in those 10 s' '
	tps=$(sed -n "s/^tps = \([0-9.]*\) .*/\1/p" bench.out) &&
	# the evaluation time: 13 s after the first second pgbench logged, so that the
	# window lies inside the run; the log gives the TPS of the same 10 s
	python3 -c "
import glob
per_s = {}
for f in glob.glob(\"agg.*\"):
    for l in open(f):
        per_s[int(l.split()[0])] = per_s.get(int(l.split()[0]), 0) + int(l.split()[1])
end = min(per_s) + 13
print(end, sum(per_s.get(s, 0) for s in range(end - 10, end)) / 10.0)
" >truth.txt &&
	read t window <truth.txt &&
	promql "sum(rate(dbtap_transactions_total{cluster=\"$A\"}[10s]))" $t >rate.json &&
	python3 -c "
import json
r = json.load(open(\"rate.json\"))[\"data\"][\"result\"]
got = float(r[0][\"value\"][1])
print(\"prometheus\", got, \"pgbench in the window\", $window, \"pgbench over the run\", $tps)
# against what pgbench itself counted in those 10 s: over the whole run its TPS can
# differ more, when a loaded machine lets it fall behind its schedule and catch up
assert abs(got - $window) <= 0.05 * $window, (got, $window)
"
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
