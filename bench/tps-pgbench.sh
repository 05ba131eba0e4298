#!/bin/bash
# bench/tps-pgbench.sh: what `dbtap tps --per-backend` costs a PostgreSQL server, next
# to an equivalent bpftrace script, and how fast and small each is to start.
#
#	bench/tps-pgbench.sh [ROUNDS [SECS]]    default 3 rounds of 8 s per mode
#
# One throwaway cluster, pgbench -S -M prepared -c 4 -j 2 (select-only: the most
# transactions per second, so the probes' share of the work is the largest). Each
# round runs pgbench untraced, under dbtap tps --per-backend, and under bpftrace with
# the same three USDT probes, per-thread start times, per-process counts and a
# histogram, in that order, so drift hits all alike; prints median TPS and the ratio
# to untraced. Then start-up time (spawn -> attached) and peak RSS of both tools.
# Ratios measured side by side, never absolute targets: machines differ.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-8}
DBTAP="$ROOT/dbtap"

[ "$(id -u)" = 0 ] || { echo "error: needs root (BPF, uprobes)" >&2; exit 1; }
[ -x "$DBTAP" ] || { echo "error: $DBTAP is not built" >&2; echo "hint: run make" >&2; exit 1; }

TRASH=$(mktemp -d /tmp/dbtap-bench-tps.XXXXXX) || exit 1
chmod 755 "$TRASH"
atexit=()
test_atexit() { atexit=("$1" "${atexit[@]}"); }
test_skip_all() { echo "error: $*" >&2; exit 1; }
cleanup() {
	for c in "${atexit[@]}"; do eval "$c" >/dev/null 2>&1; done
	rm -rf "$TRASH"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
. "$ROOT/tests/lib/pg.sh"

pg_start bench "autovacuum = off" || exit 1
pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1
BIN=$(readlink "/proc/$PG_PID/exe")

cat >tps.bt <<BT
BEGIN { printf("attached\n"); }
usdt:$BIN:postgresql:transaction__start { @start[tid] = nsecs; }
usdt:$BIN:postgresql:transaction__commit /@start[tid]/ {
	@commits[pid] = count(); @us = hist((nsecs - @start[tid]) / 1000); delete(@start[tid]);
}
usdt:$BIN:postgresql:transaction__abort /@start[tid]/ {
	@aborts[pid] = count(); delete(@start[tid]);
}
BT
have_bpftrace=
command -v bpftrace >/dev/null && have_bpftrace=1

tps() {
	pgbench -n -S -M prepared -c 4 -j 2 -T "$SECS" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

# run_mode MODE: one pgbench run under MODE (none, dbtap, bpftrace); prints its TPS.
run_mode() {
	local mode=$1 pid t ready
	case $mode in
	none)
		tps
		return ;;
	dbtap)
		"$DBTAP" tps --pg "$PGDATA" --per-backend -j >"t.dbtap.json" 2>"t.dbtap.err" &
		pid=$!
		ready='^tracing' ;;
	bpftrace)
		bpftrace -B line tps.bt >"t.bpftrace.out" 2>&1 &
		pid=$!
		ready='^attached' ;;
	esac
	for i in $(seq 1 200); do
		grep -q -e "$ready" "t.$mode.err" "t.$mode.out" 2>/dev/null && break
		sleep 0.05
	done
	t=$(tps)
	kill -INT $pid
	# bpftrace sometimes ignores SIGINT while detaching: give it 10 s, then KILL.
	for i in $(seq 1 100); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL $pid 2>/dev/null
	wait $pid
	echo "$t"
}

modes="none dbtap"
[ -n "$have_bpftrace" ] && modes="$modes bpftrace"
echo "pgbench -S -M prepared -c 4 -j 2, $SECS s per run, $ROUNDS rounds; $(nproc) cpus, Linux $(uname -r)"
for r in $(seq 1 "$ROUNDS"); do
	for m in $modes; do
		echo "$m $(run_mode $m)" >>tps.txt
	done
	echo "  round $r: $(tail -n 3 tps.txt | tr '\n' ' ')"
done
python3 - tps.txt t.dbtap.json <<'PY'
import json, statistics, sys
v = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 2:
        v.setdefault(f[0], []).append(float(f[1]))
base = statistics.median(v["none"])
print("%-30s %10s %12s" % ("mode", "median TPS", "vs untraced"))
for m, name in (("none", "untraced"), ("dbtap", "dbtap tps --per-backend"),
                ("bpftrace", "bpftrace, same probes")):
    if m in v:
        med = statistics.median(v[m])
        print("%-30s %10.1f %12.3f" % (name, med, med / base))
s = [json.loads(l) for l in open(sys.argv[2])][-1]
print("last dbtap run: %d commits in %.1f s = %.1f tps seen by the probes" %
      (s["commits"], s["duration"], s["tps"]))
PY

# Start-up and memory: spawn -> attached ("tracing" line, bpftrace's BEGIN), then
# SIGINT; peak RSS from wait4().
python3 - "$DBTAP" "$PGDATA" "$have_bpftrace" <<'PY'
import os, signal, statistics, subprocess, sys, threading, time
dbtap, pgdata, have_bpftrace = sys.argv[1:]

def measure(cmd, ready):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t_ready = None
    for line in p.stdout:
        if line.startswith(ready):
            t_ready = time.monotonic() - t0
            break
    # bpftrace may miss a SIGINT that comes right after BEGIN: let both settle, then
    # drain the output while waiting, and kill what has not exited after 10 s.
    time.sleep(0.5)
    drain = threading.Thread(target=p.stdout.read)
    drain.start()
    p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 10
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            deadline = float("inf")
        time.sleep(0.05)
    drain.join()
    return t_ready, ru.ru_maxrss / 1024.0

tools = [("dbtap tps --per-backend", [dbtap, "tps", "--pg", pgdata, "--per-backend"], "tracing")]
if have_bpftrace:
    tools.append(("bpftrace, same probes", ["bpftrace", "-B", "line", "tps.bt"], "attached"))
print("%-24s %18s %14s" % ("tool", "start->attached ms", "peak RSS MiB"))
for name, cmd, ready in tools:
    runs = [measure(cmd, ready) for _ in range(5)]
    ok = [r for r in runs if r[0] is not None]
    if not ok:
        print("%-24s %18s %14s" % (name, "failed", "-"))
        continue
    print("%-24s %18.1f %14.1f" % (name, 1000 * statistics.median(r[0] for r in ok),
                                  max(r[1] for r in ok)))
PY
