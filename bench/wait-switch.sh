#!/bin/bash
# bench/wait-switch.sh: what `dbtap wait` costs: its sched_switch program's time per
# context switch of a traced backend beside an empty program at the same tracepoint,
# and pgbench throughput with wait attached against untraced.
#
#	bench/wait-switch.sh [PAIRS [SECS]]    default 5 pairs of 10 s per mode (0: no pairs,
#	                                       the cost per switch alone)
#
# One throwaway cluster, pgbench -S -c 4 -j 2 (select-only, simple protocol: every
# statement is a round trip, so the backends switch out and back in for each one).
# (1) bench/lib/abrun.py: interleaved pairs of pgbench runs untraced and under `dbtap
# wait`, and under an empty program at sched_switch (`dbtap wait --empty-program`):
# the median TPS ratio and its spread, the server's CPU and context switches per
# transaction, and each program's runs and ns per run (the kernel's BPF statistics).
# (2) The program runs at every switch of the machine: an idle run (wait attached,
# the cluster quiet) gives the cost of a switch that is no traced backend's, and one
# loaded run, with wait's own count of the switches of traced backends, the cost of
# one of those.
# Ratios measured side by side, never absolute targets: machines differ.
#
# ROUNDS=N repeats (2) N times, each round every mode once; VERSUS="LABEL=BINARY ..."
# measures other builds of dbtap in the same rounds as this one (a build with a part
# of the program changed: what that part costs, beside the floor, under the same load).
PAIRS=${1:-5}
SECS=${2:-10}
ROUNDS=${ROUNDS:-1}
. "$(dirname "$0")/lib/bench.sh"
bench_cluster bench-wait "BPF, BTF tracepoints, uprobes"

if [ "$PAIRS" != 0 ]; then
	echo "== pgbench -S -c 4 -j 2, $PAIRS pairs of $SECS s: untraced vs dbtap wait (and --usdt), vs an empty program"
	python3 "$ROOT/bench/lib/abrun.py" --pg-pid "$PG_PID" --pgdata "$PGDATA" --workdir "$TRASH" \
		--pairs "$PAIRS" --secs "$SECS" --workload select --commands wait,wait-usdt,wait-empty \
		--diag || exit 1
fi

bench_bpf_stats

# on_switch's (or on_switch_empty's) "RUNS NS" in dbtap pid $1: with --empty-program
# on_switch is loaded too, and never runs
prog_stats() {
	bench_prog_stats "$1" | awk 'BEGIN { runs = 0; ns = 0 } ($1 == "on_switch" || $1 == "on_switch_empty") && $2 >= runs {
		runs = $2; ns = $3 } END { print runs + 0, ns + 0 }'
}

# run_wait [idle] [WAIT_OPTION...]: SECS of pgbench (or, with idle, of no load) under
# wait; prints "RUNS RUN_NS TRACED_SWITCHES", then the program's own timing of its runs
# (DBTAP_WAIT_SELF_TIME): "UNTRACED_RUNS UNTRACED_NS TRACED_RUNS TRACED_NS" (0 0 0 0
# from a build without it).
run_wait() {
	local pid s0 s1 mode=$1
	shift
	DBTAP_WAIT_SELF_TIME=1 "${BIN:-$DBTAP}" wait --pg "$PGDATA" -j "$@" >w.json 2>w.err &
	pid=$!
	bench_wait_line '^tracing' w.err
	s0=$(prog_stats $pid)
	if [ "$mode" = idle ]; then
		sleep "$SECS"
	else
		pgbench -n -S -c 4 -j 2 -T "$SECS" >/dev/null 2>&1
	fi
	s1=$(prog_stats $pid)
	kill -INT $pid
	wait $pid
	sw=$(python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
t = {}
for l in open(sys.argv[2]):
    if l.startswith("{\"wait_self_time\""):
        t = json.loads(l)["wait_self_time"]
print(s.get("program", {}).get("traced_switches", 0),
      *(t.get(k, 0) for k in ("untraced_runs", "untraced_ns", "traced_runs", "traced_ns")))' \
		w.json w.err)
	echo "$s0 $s1 $sw" | awk '{ print $3 - $1, $4 - $2, $5, $6, $7, $8, $9 }'
}

# run_modes LABEL [WAIT_OPTION...]: the idle and the loaded run of one way of reading
# the statements, and what a switch costs in each.
run_modes() {
	local label=$1 idle loaded
	shift
	idle=$(run_wait idle "$@")
	loaded=$(run_wait loaded "$@")
	python3 - "$label" $idle $loaded <<'PY'
import sys
label = sys.argv[1]
v = [int(x) for x in sys.argv[2:]]
iruns, ins, _ = v[0:3]
runs, ns, traced, self_u_runs, self_u_ns, self_t_runs, self_t_ns = v[7:14]
untraced_ns = ins / max(1, iruns)
# each switch involving a traced backend is one run (counted by wait); the others cost
# what a run costs when no traced backend is involved (the idle run)
print("  %s, any switch (pgbench running): %7.1f ns  (%.0f %% of the runs a traced backend's)"
      % (label, ns / max(1, runs), 100.0 * traced / max(1, runs)))
print("  %s, a switch of no traced thread: %7.1f ns  (idle run)" % (label, untraced_ns))
print("  %s, a switch of a traced backend: %7.1f ns  (derived)"
      % (label, (ns - (runs - traced) * untraced_ns) / max(1, traced)))
# the program's own clock, both kinds in the same loaded run: what the derivation
# above cannot resolve when most of the machine's switches are other jobs'
if self_t_runs:
    print("  %s, self-timed, pgbench running: a traced backend's switch %7.1f ns, another %6.1f ns"
          % (label, self_t_ns / self_t_runs, self_u_ns / max(1, self_u_runs)))
PY
}

echo "== wait's program at sched_switch, ns per run (kernel run_time_ns / run_cnt)"
for round in $(seq 1 "$ROUNDS"); do
	[ "$ROUNDS" = 1 ] || echo "-- round $round of $ROUNDS, load $(cut -d' ' -f1-3 /proc/loadavg)"
	# the statements read from PgBackendStatus (15, 16), then from the USDT probes
	run_modes wait
	run_modes "wait --usdt" --usdt
	for v in $VERSUS; do
		BIN=${v#*=} run_modes "${v%%=*}"
	done
	floor=$(run_wait loaded --empty-program)
	echo "$floor" | awk '{ printf "  empty program (the floor), any switch: %7.1f ns\n", $2 / ($1 ? $1 : 1) }'
done
