#!/bin/bash
# bench/tps-pgbench.sh: what `dbtap tps --by pid` costs a PostgreSQL server, next
# to an equivalent bpftrace script, and how fast and small each is to start.
#
#	bench/tps-pgbench.sh [ROUNDS [SECS]]    default 3 rounds of 8 s per mode
#
# One throwaway cluster (from a private copy of the server binary: no other tracer's
# probe traps in it), pgbench -S -M prepared -c 4 -j 2 (select-only: the most
# transactions per second, so the probes' share of the work is the largest). Each
# round runs pgbench untraced, under dbtap tps --by pid, and under bpftrace with
# the same three USDT probes, per-thread start times, per-process counts and a
# histogram, in that order, so drift hits all alike; prints median TPS, the ratio to
# untraced, and the backends' CPU time per transaction (from the postmaster's
# reaped-children times), whose difference to untraced is what tracing costs each
# transaction, and each BPF program's own time per hit (kernel.bpf_stats_enabled).
# Then start-up time (spawn -> attached) and peak RSS of both tools.
# Ratios measured side by side, never absolute targets: machines differ.
ROUNDS=${1:-3}
SECS=${2:-8}
. "$(dirname "$0")/lib/bench.sh"
bench_cluster bench-tps "BPF, uprobes"
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

# The postmaster's reaped children's CPU time (cutime + cstime, clock ticks): the
# backends' CPU, tracing traps included, once they exit at the end of a run.
children_cpu() {
	awk '{ print $16 + $17 }' "/proc/$PG_PID/stat"
}

# One pgbench run: "TPS BACKEND_CPU_US_PER_TRANSACTION". CPU per transaction is what
# the probes cost the server, and, unlike TPS, it does not move when other jobs
# compete for the CPUs.
tps() {
	local c0 c1 out
	c0=$(children_cpu)
	out=$(pgbench -n -S -M prepared -c 4 -j 2 -T "$SECS" 2>/dev/null)
	sleep 0.3 # the backends exit after pgbench
	c1=$(children_cpu)
	echo "$out" | awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" '
		/^number of transactions actually processed/ { split($6, a, "/"); n = a[1] }
		/^tps = / { t = $3 }
		END { printf "%s %.3f\n", t, n ? c / hz * 1e6 / n : 0 }'
}

# run_mode MODE: one pgbench run under MODE (none, dbtap, bpftrace); prints its TPS.
run_mode() {
	local mode=$1 pid t ready
	case $mode in
	none)
		tps
		return ;;
	dbtap)
		"$DBTAP" tps --pg "$PGDATA" --by pid -j >"t.dbtap.json" 2>"t.dbtap.err" &
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
	bpftool -j prog show >"progs.$mode.json" 2>/dev/null
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

# BPF run-time statistics (kernel.bpf_stats_enabled): each program's own ns per hit,
# a figure the machine's noise does not blur. Restored on exit.
bench_bpf_stats

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
v, cpu = {}, {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 3:
        v.setdefault(f[0], []).append(float(f[1]))
        cpu.setdefault(f[0], []).append(float(f[2]))
base = statistics.median(v["none"])
cbase = statistics.median(cpu["none"])
print("%-26s %10s %8s %14s %12s" % ("mode", "median TPS", "vs none", "backend CPU/tx", "cost/tx"))
for m, name in (("none", "untraced"), ("dbtap", "dbtap tps --by pid"),
                ("bpftrace", "bpftrace, same probes")):
    if m in v:
        med, c = statistics.median(v[m]), statistics.median(cpu[m])
        print("%-26s %10.1f %8.3f %11.2f us %9.2f us" % (name, med, med / base, c, c - cbase))
for m, name, start, commit in (("dbtap", "dbtap tps --by pid", "tx_start", "tx_commit"),
                               ("bpftrace", "bpftrace, same probes", "transaction__st", "transaction__co")):
    try:
        progs = json.load(open("progs.%s.json" % m))
    except (OSError, ValueError):
        continue
    ns = {}
    for p in progs:
        if p.get("name") in (start, commit) and p.get("run_cnt"):
            if p["run_cnt"] > ns.get(p["name"], (0, 0))[1]:
                ns[p["name"]] = (p["run_time_ns"] / p["run_cnt"], p["run_cnt"])
    if start in ns and commit in ns:
        print("%-26s BPF programs per transaction: start %.0f ns + commit %.0f ns (last run)"
              % (name, ns[start][0], ns[commit][0]))
s = [json.loads(l) for l in open(sys.argv[2])][-1]
print("last dbtap run: %d commits in %.1f s = %.1f tps seen by the probes" %
      (s["commits"], s["duration_s"], s["tps"]))
PY

# Start-up and memory: spawn -> attached ("tracing" line, bpftrace's BEGIN), and the
# peak RSS (bench/lib/lifecycle.py).
printf '%-24s %18s %14s\n' tool "start->attached ms" "peak RSS MiB"
bench_startup "dbtap tps --by pid" '^tracing ' "$DBTAP" tps --pg "$PGDATA" --by pid
[ -n "$have_bpftrace" ] && bench_startup "bpftrace, same probes" '^attached' bpftrace -B line tps.bt
