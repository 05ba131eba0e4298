#!/bin/bash
# bench/watch-pgbench.sh: what `dbtap watch xid` costs a PostgreSQL server, and how
# fast and small dbtap is next to bpftrace doing the same watchpoint.
#
#	bench/watch-pgbench.sh [ROUNDS [SECS]]    default 3 rounds of 8 s per mode
#
# One throwaway cluster, pgbench -c 4 (TPC-B-like: every transaction gets an XID).
# Each round runs pgbench untraced, under `watch xid` in trap mode and in poll mode,
# in that order, so drift hits all three alike; prints median TPS and the ratio to
# untraced. Then start-up time (spawn -> attached) and peak RSS of dbtap and bpftrace.
# Ratios measured side by side, never absolute targets: machines differ.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-8}
DBTAP="$ROOT/dbtap"

[ "$(id -u)" = 0 ] || { echo "error: needs root (hardware breakpoints, BPF)" >&2; exit 1; }
[ -x "$DBTAP" ] || { echo "error: $DBTAP is not built" >&2; echo "hint: run make" >&2; exit 1; }

TRASH=$(mktemp -d /tmp/dbtap-bench-watch.XXXXXX) || exit 1
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
. "$ROOT/tests/lib/pg.sh"

pg_start bench "autovacuum = off" || exit 1
pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1

tps() {
	pgbench -n -c 4 -j 2 -T "$SECS" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

# run_mode MODE: one pgbench run under MODE (none, trap, poll); prints TPS, and for
# trap the XIDs dbtap counted next to pgbench's transaction count as a sanity check.
run_mode() {
	local mode=$1 pid t
	if [ "$mode" = none ]; then
		tps
		return
	fi
	"$DBTAP" watch xid --pg "$PGDATA" --mode "$mode" -i 0 -j >"w.$mode.json" 2>"w.$mode.err" &
	pid=$!
	for i in $(seq 1 100); do
		grep -q -e '^watching' -e '^polling' "w.$mode.err" && break
		sleep 0.05
	done
	t=$(tps)
	kill -INT $pid
	wait $pid
	echo "$t"
}

echo "pgbench -c 4 -j 2, $SECS s per run, $ROUNDS rounds; $(nproc) cpus, Linux $(uname -r)"
for r in $(seq 1 "$ROUNDS"); do
	for m in none trap poll; do
		echo "$m $(run_mode $m)" >>tps.txt
	done
	echo "  round $r: $(tail -n 3 tps.txt | tr '\n' ' ')"
done
python3 - tps.txt <<'PY'
import statistics, sys
v = {}
for l in open(sys.argv[1]):
    m, t = l.split()
    v.setdefault(m, []).append(float(t))
base = statistics.median(v["none"])
print("%-28s %10s %10s" % ("mode", "median TPS", "vs untraced"))
for m, name in (("none", "untraced"), ("trap", "watch xid (trap)"), ("poll", "watch xid --mode poll")):
    med = statistics.median(v[m])
    print("%-28s %10.1f %10.3f" % (name, med, med / base))
PY

# Start-up and memory. dbtap: spawn -> its "watching" line (printed once every
# breakpoint is attached). Both tools: spawn -> exit of a run that attaches the same
# watchpoint and stops at once (dbtap -d 0.001; bpftrace interval:ms:1 { exit() }, on
# the postmaster since it needs -p: its BEGIN fires before the other probes attach,
# so it marks nothing). Peak RSS from wait4(); medians of 5 runs, RSS the maximum.
addr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["address"])' w.trap.json)
python3 - "$DBTAP" "$PGDATA" "$PG_PID" "$addr" <<'PY'
import os, signal, statistics, subprocess, sys, threading, time
dbtap, pgdata, pgpid, addr = sys.argv[1:]

def reap(p, t0):
    # wait4 ourselves (not Popen) to get the child's rusage; a watchdog kills hangs
    timer = threading.Timer(30, lambda: p.kill())
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = 0
    return time.monotonic() - t0, ru.ru_maxrss / 1024.0, status

def until_ready(cmd, marker):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t = None
    for line in p.stderr:
        if line.startswith(marker):
            t = time.monotonic() - t0
            break
    p.send_signal(signal.SIGINT)
    p.stderr.read()
    _, rss, _ = reap(p, t0)
    return t, rss

def until_exit(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t, rss, status = reap(p, t0)
    return t if status == 0 else None, rss

ready = [until_ready([dbtap, "watch", "xid", "--pg", pgdata, "-i", "0"], "watching") for _ in range(5)]
tools = [("dbtap watch xid", [dbtap, "watch", "xid", "--pg", pgdata, "-d", "0.001", "-i", "0"])]
if subprocess.run(["sh", "-c", "command -v bpftrace"], capture_output=True).returncode == 0:
    tools.append(("bpftrace watchpoint", ["bpftrace", "-p", pgpid, "-e",
                  "watchpoint:%s:8:w { @ = count(); } interval:ms:1 { exit(); }" % addr]))
ok = [r[0] for r in ready if r[0] is not None]
print("dbtap: spawn -> attached %.1f ms (median of %d), peak RSS %.1f MiB"
      % (1000 * statistics.median(ok), len(ok), max(r[1] for r in ready)))
print("%-22s %20s %14s" % ("attach and stop at once", "spawn -> exit ms", "peak RSS MiB"))
for name, cmd in tools:
    runs = [until_exit(cmd) for _ in range(5)]
    t = [r[0] for r in runs if r[0] is not None]
    print("%-22s %20s %14.1f" % (name, "%.1f" % (1000 * statistics.median(t)) if t else "failed",
                                 max(r[1] for r in runs)))
PY
