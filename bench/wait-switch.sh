#!/bin/bash
# bench/wait-switch.sh: what `dbtap wait` costs: its sched_switch program's time per
# context switch of a traced backend beside an empty program at the same tracepoint,
# and pgbench throughput with wait attached against untraced.
#
#	bench/wait-switch.sh [ROUNDS [SECS]]    default 3 rounds of 6 s per mode
#
# One throwaway cluster, pgbench -c 4 -j 2 (select-only, simple protocol: every
# statement is a round trip, so the backends switch out and back in for each one).
# Each round runs pgbench untraced, under `dbtap wait`, and under an empty program at
# sched_switch (`dbtap wait --empty-program`), in that order, so drift hits all alike.
# The programs' own time comes from kernel.bpf_stats_enabled (run_time_ns/run_cnt):
# the program runs at every switch of the machine; the switches of traced backends
# are told apart by wait's own count of them, and an idle round (the cluster
# quiet) gives the cost of a switch that is no traced backend's.
# Ratios measured side by side, never absolute targets: machines differ.
ROUNDS=${1:-3}
SECS=${2:-6}
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init bench-wait "BPF, BTF tracepoints, uprobes"

pg_start bench "autovacuum = off" || exit 1
pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1

stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null)
sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null
test_atexit "sysctl -q -w kernel.bpf_stats_enabled=${stats_was:-0}"

# PROGRAM's "RUNS NS": other tracers may run programs of the same name (stat has an
# on_switch): ours is the one sharing maps with the newest program of wait's own
# names (event_multi or event_uprobe; on_switch_empty, only this script loads).
prog_stats() {
	bpftool -j prog show | python3 -c '
import json, sys
progs = json.load(sys.stdin)
want = sys.argv[1]
mark = [p for p in progs if p.get("name") in ("event_multi", "event_uprobe", "on_switch_empty")]
mark = max(mark, key=lambda p: p["id"]) if mark else None
ours = [p for p in progs if p.get("name") == want and mark and
        set(p.get("map_ids", [])) & set(mark.get("map_ids", []))]
p = ours[0] if ours else None
print(p["run_cnt"], p["run_time_ns"]) if p and "run_cnt" in p else print("0 0")' "$1"
}

# The postmaster's reaped children's CPU time (cutime + cstime, clock ticks): the
# backends' CPU, the program's time at their switches included, once they exit.
children_cpu() {
	awk '{ print $16 + $17 }' "/proc/$PG_PID/stat"
}

# One pgbench run: "TPS BACKEND_CPU_US_PER_TRANSACTION"; CPU per transaction does not
# move when other jobs compete for the CPUs, as TPS does.
tps() {
	local c0 c1 out
	c0=$(children_cpu)
	out=$(pgbench -n -S -c 4 -j 2 -T "$SECS" 2>/dev/null)
	sleep 0.3 # the backends exit after pgbench
	c1=$(children_cpu)
	echo "$out" | awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" '
		/^number of transactions actually processed/ { split($6, a, "/"); n = a[1] }
		/^tps = / { t = $3 }
		END { printf "%s %.3f\n", t, n ? c / hz * 1e6 / n : 0 }'
}

# run_mode MODE [idle]: pgbench (or, with idle, the same time with no load) under MODE;
# prints "TPS CPU_US_PER_TX RUNS RUN_NS TRACED_SWITCHES".
run_mode() {
	local mode=$1 pid t args=() prog=on_switch s0 s1
	case $mode in
	none)
		echo "$(tps) 0 0 0"
		return ;;
	wait) ;;
	empty) args=(--empty-program); prog=on_switch_empty ;;
	esac
	"$DBTAP" wait --pg "$PGDATA" -j "${args[@]}" >"w.$mode.json" 2>"w.$mode.err" &
	pid=$!
	for i in $(seq 1 200); do
		grep -q '^tracing' "w.$mode.err" 2>/dev/null && break
		sleep 0.05
	done
	s0=$(prog_stats $prog)
	if [ "$2" = idle ]; then
		sleep "$SECS"
		t="0 0"
	else
		t=$(tps)
	fi
	s1=$(prog_stats $prog)
	kill -INT $pid
	wait $pid
	python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
print(s.get("program", {}).get("traced_switches", 0))' "w.$mode.json" >w.sw
	echo "$t $s0 $s1 $(cat w.sw)" | awk '{ print $1, $2, $5 - $3, $6 - $4, $7 }'
}

echo "pgbench -S -c 4 -j 2, $SECS s per run, $ROUNDS rounds; $(nproc) cpus, Linux $(uname -r)"
echo "idle $(run_mode wait idle)" >sw.txt
for r in $(seq 1 "$ROUNDS"); do
	for m in none wait empty; do
		echo "$m $(run_mode $m)" >>sw.txt
	done
	echo "  round $r: $(tail -n 3 sw.txt | tr '\n' ' ')"
done
python3 - sw.txt <<'PY'
import statistics, sys
rows = {}
for l in open(sys.argv[1]):
    m, tps, cpu, runs, ns, sw = l.split()
    rows.setdefault(m, []).append((float(tps), int(runs), int(ns), int(sw), float(cpu)))
med = statistics.median
print("%-34s %10s %15s %15s %10s" % ("mode", "median TPS", "paired vs none", "backend CPU/tx",
                                     "cost/tx"))
cbase = med(r[4] for r in rows["none"])
for m, name in (("none", "untraced"), ("wait", "dbtap wait"),
                ("empty", "empty program at sched_switch")):
    ratio = med(r[0] / n[0] for r, n in zip(rows[m], rows["none"]))
    c = med(r[4] for r in rows[m])
    print("%-34s %10.1f %15.3f %12.2f us %7.2f us" % (name, med(r[0] for r in rows[m]), ratio,
                                                     c, c - cbase))
idle = rows["idle"][0]
untraced_ns = idle[2] / max(1, idle[1])
# each switch involving a traced backend is one run (counted by wait); the others cost
# what a run costs when no traced backend is involved (the idle round)
traced = [(r[2] - (r[1] - r[3]) * untraced_ns) / max(1, r[3]) for r in rows["wait"]]
print("BPF program at sched_switch, ns per run (kernel run_time_ns / run_cnt), median of rounds:")
print("  empty program, any switch:          %7.1f ns" % med(r[2] / max(1, r[1]) for r in rows["empty"]))
print("  wait, any switch (pgbench running): %7.1f ns  (%.0f %% of the runs a traced backend's)"
      % (med(r[2] / max(1, r[1]) for r in rows["wait"]),
         100.0 * sum(r[3] for r in rows["wait"]) / max(1, sum(r[1] for r in rows["wait"]))))
print("  wait, a switch of no traced thread: %7.1f ns  (idle round)" % untraced_ns)
print("  wait, a switch of a traced backend: %7.1f ns  (derived)" % med(traced))
PY
