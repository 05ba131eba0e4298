#!/bin/bash
# bench/serve.sh: what `dbtap serve` costs a scraper and a server.
#
#	bench/serve.sh [ROUNDS [SECS] [SCRAPES]]   default 3 rounds of 8 s, 10000 scrapes
#
# One throwaway cluster. (1) 1,000 distinct statements, so that serve exports 1,000
# statement series (--max-series 1000): scrape time (curl, and serve's own
# dbtap_scrape_duration_seconds) and size. (2) SCRAPES scrapes over one keep-alive
# connection: serve's RSS after the first 100 and after all (it must not grow).
# (3) pgbench -S -c 4 -j 2 (simple protocol: every probe of serve fires) untraced and
# with serve attached and scraped every second, interleaved A/B/B/A per round so drift
# hits both alike: median TPS and the ratio. Ratios measured side by side, never
# absolute targets: machines differ.
ROUNDS=${1:-3}
SECS=${2:-8}
SCRAPES=${3:-10000}
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init bench-serve "BPF, uprobes"

pg_start bench "autovacuum = off" || exit 1
pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1

SERVE_PID=
serve_start() {
	"$DBTAP" serve --pg "$PGDATA" --listen 127.0.0.1:0 "$@" >serve.out 2>serve.err &
	SERVE_PID=$!
	test_atexit "kill $SERVE_PID"
	for i in $(seq 1 200); do
		ADDR=$(sed -n 's|^serving http://\(.*\)/metrics.*|\1|p' serve.err)
		[ -n "$ADDR" ] && return 0
		sleep 0.05
	done
	echo "error: dbtap serve did not start:" >&2
	cat serve.err >&2
	exit 1
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

echo "== pgbench -S -c 4 -j 2, $ROUNDS rounds of $SECS s: untraced vs serve attached"
# The postmaster's reaped children's CPU time (cutime + cstime, clock ticks): the
# backends' CPU, the probes' traps included, once they exit at the end of a run.
children_cpu() {
	awk '{ print $16 + $17 }' "/proc/$PG_PID/stat"
}
# One pgbench run: "TPS BACKEND_CPU_US_PER_TRANSACTION"; CPU per transaction is what the
# probes cost the server and, unlike TPS, it barely moves when other jobs compete.
tps() {
	local c0 c1 out
	c0=$(children_cpu)
	out=$(pgbench -n -S -c 4 -j 2 -T "$SECS" 2>/dev/null)
	sleep 0.3
	c1=$(children_cpu)
	echo "$out" | awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" '
		/^number of transactions actually processed/ { split($6, a, "/"); n = a[1] }
		/^tps = / { t = $3 }
		END { printf "%s %.3f\n", t, n ? c / hz * 1e6 / n : 0 }'
}
with_serve() {
	serve_start
	# a scraper: once a second, as Prometheus would
	(while kill -0 "$SERVE_PID" 2>/dev/null; do curl -sf -o /dev/null "http://$ADDR/metrics"; sleep 1; done) &
	local scraper=$!
	sleep 1
	tps
	serve_stop >/dev/null 2>&1
	kill "$scraper" 2>/dev/null
	wait "$scraper" 2>/dev/null
}
: >ab.txt
for r in $(seq 1 "$ROUNDS"); do
	# A B B A: each mode as often first as second
	echo "untraced $(tps)" >>ab.txt
	echo "serve $(with_serve)" >>ab.txt
	echo "serve $(with_serve)" >>ab.txt
	echo "untraced $(tps)" >>ab.txt
done
python3 - <<'PY'
import statistics
runs = [l.split() for l in open("ab.txt")]
u = [(float(t), float(c)) for m, t, c in runs if m == "untraced"]
s = [(float(t), float(c)) for m, t, c in runs if m == "serve"]
# paired: the serve runs of a round against the untraced runs of the same round
pairs = [(s[2 * i][0] + s[2 * i + 1][0]) / (u[2 * i][0] + u[2 * i + 1][0]) for i in range(len(u) // 2)]
print("  untraced TPS median %.0f %s" % (statistics.median(x[0] for x in u), [round(x[0]) for x in u]))
print("  serve    TPS median %.0f %s" % (statistics.median(x[0] for x in s), [round(x[0]) for x in s]))
print("  serve / untraced TPS: median of paired rounds %.3f %s" % (statistics.median(pairs),
      [round(p, 3) for p in pairs]))
cu, cs = statistics.median(x[1] for x in u), statistics.median(x[1] for x in s)
print("  backend CPU per transaction: untraced %.1f us, serve %.1f us (%+.1f us)" % (cu, cs, cs - cu))
PY
