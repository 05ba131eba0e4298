#!/bin/bash
# bench/serve.sh: what `dbtap serve` costs a scraper and a server.
#
#	bench/serve.sh [PAIRS [SECS [SCRAPES]]]   default 5 pairs of 10 s, 10000 scrapes
#
# One throwaway cluster. (1) 1,000 distinct statements, so that serve exports 1,000
# statement series (--max-series 1000): scrape time (curl, and serve's own
# dbtap_scrape_duration_seconds) and size. (2) SCRAPES scrapes over one keep-alive
# connection: serve's RSS after the first 100 and after all (it must not grow).
# (3) pgbench -S -c 4 -j 2 (simple protocol: every probe of serve fires) untraced and
# with serve attached and scraped every second, in interleaved pairs (bench/lib/abrun.py:
# the median TPS ratio and its spread, the server's CPU per transaction, each of serve's
# programs' runs and ns per transaction). Ratios measured side by side, never absolute
# targets: machines differ.
PAIRS=${1:-5}
SECS=${2:-10}
SCRAPES=${3:-10000}
. "$(dirname "$0")/lib/bench.sh"
bench_cluster bench-serve "BPF, uprobes"

SERVE_PID=
serve_start() {
	"$DBTAP" serve --pg "$PGDATA" --listen 127.0.0.1:0 "$@" >serve.out 2>serve.err &
	SERVE_PID=$!
	test_atexit "kill $SERVE_PID"
	bench_wait_line '^serving http://.*/metrics' serve.err || exit 1
	ADDR=$(sed -n 's|^serving http://\(.*\)/metrics.*|\1|p' serve.err)
}
serve_stop() {
	kill "$SERVE_PID" && wait "$SERVE_PID"
}

echo "== scrape time and size with 1,000 statement series"
serve_start --max-series 1000
for i in $(seq 1 1000); do echo "select 1 as c$i;"; done >stmts.sql
psql -XAtq -f stmts.sql >/dev/null
curl -sf "http://$ADDR/metrics" >m.txt
series=$(grep -c '^dbtap_statement_seconds_count{' m.txt)
samples=$(grep -vc '^#' m.txt)
for i in $(seq 1 200); do
	curl -sf -o /dev/null -w '%{time_total}\n' "http://$ADDR/metrics"
done | sort -n >times.txt
curl -sf "http://$ADDR/metrics" >m2.txt
own=$(sed -n 's/^dbtap_scrape_duration_seconds //p' m2.txt)
printf '  %d statement series, %d samples, %d bytes (%d gzip)\n' "$series" "$samples" \
	"$(wc -c <m2.txt)" "$(gzip -c m2.txt | wc -c)"
awk '{ t[NR] = $1 } END { printf "  curl time_total over %d scrapes: median %.2f ms, p90 %.2f ms\n", NR, t[int(NR / 2)] * 1e3, t[int(NR * 0.9)] * 1e3 }' times.txt
awk -v s="$own" 'BEGIN { printf "  serve reading maps and formatting: %.3f ms (dbtap_scrape_duration_seconds)\n", s * 1e3 }'

echo "== RSS over $SCRAPES scrapes (one keep-alive connection)"
python3 - "$ADDR" "$SERVE_PID" "$SCRAPES" <<'PY'
import http.client, sys
addr, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
host, port = addr.rsplit(":", 1)
def rss():
    return next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
c = http.client.HTTPConnection(host, int(port), timeout=10)
marks = {}
for i in range(1, n + 1):
    c.request("GET", "/metrics")
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"scrape {i}: status {r.status}")
    if i in (100, n // 2, n):
        marks[i] = rss()
print("  RSS KiB: after 100 scrapes %d, after %d %d, after %d %d (growth %+d KiB)" %
      (marks[100], n // 2, marks[n // 2], n, marks[n], marks[n] - marks[100]))
PY
serve_stop

echo "== pgbench -S -c 4 -j 2, $PAIRS pairs of $SECS s: untraced vs serve attached, scraped every second"
python3 "$ROOT/bench/lib/abrun.py" --pg-pid "$PG_PID" --pgdata "$PGDATA" --workdir "$TRASH" \
	--pairs "$PAIRS" --secs "$SECS" --workload select --commands serve --diag
