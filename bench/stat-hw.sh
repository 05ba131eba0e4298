#!/bin/bash
# bench/stat-hw.sh: checks dbtap stat's hardware events where the machine has a PMU.
#
# 1. A workload with a known instruction count (build/workloads/insnloop: K iterations of
#    `dec; jnz`, 2K user instructions, K branches): dbtap stat -e instructions:u,branches:u
#    -p PID must report about 2K and K (plus the few hundred the signal return costs).
# 2. PostgreSQL: instructions:u per statement of `select count(*) from generate_series(1, N)`
#    for N and 2N with --by query: the instructions per row (the difference over N) is
#    printed, with p50/p99 and IPC, for comparison with perf stat -e instructions:u -t TID
#    run by hand around the same statements.
# Needs root, a built tree (make), and a PMU. Prints figures and ratios; exits 1 when a
# ratio is off by more than 5 %.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DBTAP="$ROOT/dbtap"
W="$ROOT/build/workloads/insnloop"

if ! grep -qx 4 /sys/bus/event_source/devices/*/type 2>/dev/null; then
	echo "no hardware PMU on this machine: hardware events cannot be checked here"
	"$DBTAP" stat -e instructions -p $$ -d 0.1
	exit 2
fi
[ -x "$DBTAP" ] && [ -x "$W" ] || { echo "error: build first: make" >&2; exit 1; }

tmp=$(mktemp -d /tmp/dbtap-stat-hw.XXXXXX)
chmod 755 "$tmp" # the cluster runs as postgres in it
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

ratio_check() { # NAME MEASURED EXPECTED
	python3 - "$@" <<'PY' || fail=1
import sys
name, got, want = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = got / want
print(f"{name:28s} measured {got:14.0f}  expected {want:14.0f}  ratio {r:.4f}")
sys.exit(0 if abs(r - 1) <= 0.05 else 1)
PY
}

echo "== 1. known loop: insnloop K, counted per process"
for k in 10000000 100000000; do
	"$W" $k >"$tmp/w.out" &
	wpid=$!
	until grep -q ready "$tmp/w.out"; do sleep 0.05; done
	"$DBTAP" -j stat -e instructions:u,branches:u,cycles:u -p $wpid >"$tmp/s.json" 2>"$tmp/s.err" &
	spid=$!
	until grep -q '^counting' "$tmp/s.err"; do sleep 0.05; done
	kill -USR1 $wpid
	until grep -q looped "$tmp/w.out"; do sleep 0.05; done
	kill -INT $spid; wait $spid
	kill $wpid
	ins=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["events"]["instructions:u"]["value"])' "$tmp/s.json")
	br=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["events"]["branches:u"]["value"])' "$tmp/s.json")
	ratio_check "instructions:u, K=$k" "$ins" $((2 * k))
	ratio_check "branches:u, K=$k" "$br" "$k"
done

echo "== 2. PostgreSQL: instructions:u per statement, --by query"
. "$ROOT/tests/lib/pg.sh" 2>/dev/null || true
TRASH=$tmp
test_atexit() { :; }
test_skip_all() { echo "skipped: $*"; exit $fail; }
if pg_start hw >/dev/null 2>&1; then
	for n in 100000 200000; do
		"$DBTAP" -j stat -e instructions:u,cycles:u --pg="$PGDATA" --by query \
			>"$tmp/q$n.json" 2>"$tmp/q$n.err" &
		spid=$!
		until grep -q '^counting' "$tmp/q$n.err"; do sleep 0.05; done
		for i in 1 2 3 4 5; do
			psql -XAtq -c "select count(*) as hw from generate_series(1, $n)" >/dev/null
		done
		kill -INT $spid; wait $spid
		python3 - "$tmp/q$n.json" $n <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][-1]["statements"]
r = [x for x in rows if x["query"].endswith("as hw from generate_series($2, $3)")][0]
ins = r["events"]["instructions:u"]
cyc = r["events"]["cycles:u"]
print(f"N={sys.argv[2]:>7}: calls {r['calls']}, instructions:u mean {ins['mean_per_call']:.0f} "
      f"p50 {ins['p50_per_call']} p99 {ins['p99_per_call']}, "
      f"IPC {ins['mean_per_call'] / cyc['mean_per_call']:.2f}")
open(sys.argv[1] + ".mean", "w").write(str(ins["mean_per_call"]))
PY
	done
	a=$(cat "$tmp/q100000.json.mean"); b=$(cat "$tmp/q200000.json.mean")
	echo "instructions per row: $(python3 -c "print(round(($b - $a) / 100000, 1))")"
	pg_stop hw >/dev/null 2>&1
else
	echo "no PostgreSQL cluster could be started: part 2 skipped"
fi
exit $fail
