#!/bin/bash
# bench/watch-pgbench.sh: what `dbtap watch xid` costs a PostgreSQL server, and how
# fast and small dbtap is next to bpftrace doing the same watchpoint.
#
#	bench/watch-pgbench.sh [ROUNDS [SECS]]    default 3 rounds of 8 s per mode
#
# One throwaway cluster (from a private copy of the server binary), pgbench -c 4
# (TPC-B-like: every transaction gets an XID).
# Each round runs pgbench untraced, under `watch xid` in trap mode and in poll mode,
# in that order, so drift hits all three alike; prints median TPS and the backends'
# CPU time per transaction (steadier than TPS on a shared machine), each with its
# ratio to untraced. Then start-up time (spawn -> attached) and peak RSS of dbtap and bpftrace.
# Ratios measured side by side, never absolute targets: machines differ.
ROUNDS=${1:-3}
SECS=${2:-8}
. "$(dirname "$0")/lib/bench.sh"
bench_cluster bench-watch "hardware breakpoints, BPF"

# pgbench's transaction count and TPS, one per line.
pgb() {
	pgbench -n -c 4 -j 2 -T "$SECS" 2>/dev/null |
		sed -n -e 's/^tps = \([0-9.]*\).*/\1/p' \
		       -e 's/^number of transactions actually processed: \([0-9]*\).*/\1/p'
}

# CPU time (ticks) of the postmaster's reaped children: the backends of finished runs.
children_ticks() {
	awk '{ print $16 + $17 }' "/proc/$PG_PID/stat"
}

# run_mode MODE: one pgbench run under MODE (none, trap, poll); prints TPS and the
# backends' CPU microseconds per transaction (they exit with pgbench's connections;
# the postmaster reaps them, so their time lands in its cutime + cstime).
run_mode() {
	local mode=$1 pid= out c0 c1 i
	if [ "$mode" != none ]; then
		"$DBTAP" watch xid --pg "$PGDATA" --mode "$mode" -i 0 -j >"w.$mode.json" 2>"w.$mode.err" &
		pid=$!
		for i in $(seq 1 100); do
			grep -q -e '^watching' -e '^polling' "w.$mode.err" && break
			sleep 0.05
		done
	fi
	c0=$(children_ticks)
	out=$(pgb)
	sleep 0.3 # the postmaster reaps the backends
	c1=$(children_ticks)
	if [ -n "$pid" ]; then
		kill -INT $pid
		wait $pid
	fi
	set -- $out
	# every TPC-B transaction gets one XID, and nothing else runs: the counts must agree
	if [ "$mode" != none ]; then
		python3 -c 'import json, sys
d = [json.loads(l) for l in open(sys.argv[1])][-1]
if d["total"] != int(sys.argv[2]):
    print("COUNT MISMATCH: %s counted %d, pgbench %s" % (sys.argv[3], d["total"], sys.argv[2]),
          file=sys.stderr)' "w.$mode.json" "$1" "$mode"
	fi
	# pgbench prints the transaction count, then the TPS
	awk -v t="$2" -v n="$1" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%s %.2f\n", t, d * 1e6 / hz / n }'
}

echo "pgbench -c 4 -j 2, $SECS s per run, $ROUNDS rounds; $(nproc) cpus, Linux $(uname -r)"
for r in $(seq 1 "$ROUNDS"); do
	for m in none trap poll; do
		echo "$m $(run_mode $m)" >>tps.txt
	done
	echo "  round $r: $(tail -n 3 tps.txt | awk '{ printf "%s %.0f tps %.1f us/tx  ", $1, $2, $3 }')"
done
python3 - tps.txt <<'PY'
import statistics, sys
v, c = {}, {}
for l in open(sys.argv[1]):
    m, t, u = l.split()
    v.setdefault(m, []).append(float(t))
    c.setdefault(m, []).append(float(u))
base, cbase = statistics.median(v["none"]), statistics.median(c["none"])
print("%-24s %10s %8s %16s %8s" % ("mode", "median TPS", "ratio", "backend CPU/tx", "ratio"))
for m, name in (("none", "untraced"), ("trap", "watch xid (trap)"), ("poll", "watch xid --mode poll")):
    med, cm = statistics.median(v[m]), statistics.median(c[m])
    print("%-24s %10.1f %8.3f %13.1f us %8.3f" % (name, med, med / base, cm, cm / cbase))
PY

# Start-up and memory. dbtap: spawn -> its "watching" line (printed once every
# breakpoint is attached) and its peak RSS (bench/lib/lifecycle.py). Both tools:
# spawn -> exit of a run that attaches the same watchpoint and stops at once (dbtap
# -d 0.01, the least -d takes; bpftrace interval:ms:1 { exit() }, on the postmaster
# since it needs -p: its BEGIN fires before the other probes attach, so it marks
# nothing), peak RSS from wait4(); medians of 5 runs, RSS the maximum.
printf '%-24s %18s %14s\n' tool "start->attached ms" "peak RSS MiB"
bench_startup "dbtap watch xid" '^watching ' "$DBTAP" watch xid --pg "$PGDATA" -i 0
addr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["address"])' w.trap.json)
python3 - "$DBTAP" "$PGDATA" "$PG_PID" "$addr" <<'PY'
import os, statistics, subprocess, sys, threading, time
dbtap, pgdata, pgpid, addr = sys.argv[1:]

def reap(p, t0):
    # wait4 ourselves (not Popen) to get the child's rusage; a watchdog kills hangs
    timer = threading.Timer(30, lambda: p.kill())
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = 0
    return time.monotonic() - t0, ru.ru_maxrss / 1024.0, status

def until_exit(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t, rss, status = reap(p, t0)
    return t if status == 0 else None, rss

tools = [("dbtap watch xid", [dbtap, "watch", "xid", "--pg", pgdata, "-d", "0.01", "-i", "0"])]
if subprocess.run(["sh", "-c", "command -v bpftrace"], capture_output=True).returncode == 0:
    tools.append(("bpftrace watchpoint", ["bpftrace", "-p", pgpid, "-e",
                  "watchpoint:%s:8:w { @ = count(); } interval:ms:1 { exit(); }" % addr]))
# ru_maxrss here, the only figure left after exit, has Python's own RSS as a floor.
print("%-22s %20s %14s" % ("attach and stop at once", "spawn -> exit ms", "ru_maxrss MiB"))
for name, cmd in tools:
    runs = [until_exit(cmd) for _ in range(5)]
    t = [r[0] for r in runs if r[0] is not None]
    print("%-22s %20s %14.1f" % (name, "%.1f" % (1000 * statistics.median(t)) if t else "failed",
                                 max(r[1] for r in runs)))
PY
