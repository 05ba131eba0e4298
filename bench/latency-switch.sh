#!/bin/bash
# bench/latency-switch.sh: what `dbtap latency query` costs per statement on each path:
# the PgBackendStatus path's programs at sched_switch, sock_recv_length and
# sched_process_exit, per look at a traced backend's row and per run of anything else,
# against --usdt's two programs at query__start and query__done plus the trap under each.
#
#	bench/latency-switch.sh [SECS [ROUNDS]]   default 10 s, 1 round (each round: both paths)
#
# One throwaway cluster, pgbench's tpcb-like script (-c 2 -j 2, 7 statements a
# transaction, simple protocol). The PgBackendStatus programs run at every switch and
# socket read of the machine: an idle run (the cluster quiet) gives the cost of a run
# that looks at no row (on a quiet machine the cluster's own background processes'
# looks weigh in it), a loaded run with latency's own count of its looks
# (switches_looked) the cost of one of those; the total a transaction is every one of
# the three programs' run time. Run times are the kernel's BPF
# statistics (kernel.bpf_stats_enabled) of the programs the dbtap process holds; the
# trap under a USDT program is `dbtap bench usdt` measured in the same round.
# Ratios and costs measured here, never absolute targets: machines differ.
SECS=${1:-10}
ROUNDS=${2:-1}
. "$(dirname "$0")/lib/bench.sh"
bench_cluster bench-latency "BPF, raw tracepoints, uprobes"
bench_bpf_stats

# run_lat idle|loaded [LATENCY_OPTION...]: one run; prints one JSON object: each
# program's runs and ns in the run, the transactions, statements and switches looked at.
run_lat() {
	local mode=$1 pid tx=0
	shift
	"$DBTAP" latency --pg "$PGDATA" -j query "$@" >l.json 2>l.err &
	pid=$!
	bench_wait_line '^tracing' l.err
	bench_prog_stats $pid >s0.txt
	if [ "$mode" = idle ]; then
		sleep "$SECS"
	else
		pgbench -n -b tpcb-like -c 2 -j 2 -T "$SECS" >pgb.out 2>&1
		tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' pgb.out)
	fi
	bench_prog_stats $pid >s1.txt
	kill -INT $pid
	wait $pid
	python3 - "${tx:-0}" <<'PY'
import json, sys
def load(f):
    return {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(f) if l.strip()}
s0, s1 = load("s0.txt"), load("s1.txt")
progs = {n: (s1[n][0] - s0.get(n, (0, 0))[0], s1[n][1] - s0.get(n, (0, 0))[1]) for n in s1}
d = [json.loads(l) for l in open("l.json") if l.strip()][-1]
p = d["pairs"][0]
print(json.dumps({"tx": int(sys.argv[1]), "progs": progs, "statements": p["count"],
                  "looked": p.get("switches_looked", 0)}))
PY
}

usdt_trap() {
	"$DBTAP" bench usdt -r 5 -d 0.2 -j 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if r.get("report") == "row" and r.get("program") == "handler" and r.get("available"):
        print(r["ns_over_baseline"] - (r.get("prog_ns") or 0))
        break
else:
    print(0)'
}

for round in $(seq 1 "$ROUNDS"); do
	echo "== round $round of $ROUNDS, $SECS s each, load $(cut -d' ' -f1-3 /proc/loadavg)"
	idle=$(run_lat idle)
	loaded=$(run_lat loaded)
	usdt=$(run_lat loaded --usdt)
	trap_ns=$(usdt_trap)
	python3 - "$idle" "$loaded" "$usdt" "$trap_ns" <<'PY'
import json, sys
idle, loaded, usdt = (json.loads(a) for a in sys.argv[1:4])
trap = float(sys.argv[4])
# The looks (switches_looked) are made at switch-outs and at socket reads
# (stmt_recv, where the kernel has sock_recv_length): each program's runs that are
# no look cost what its runs cost in the idle run; what the programs cost beyond
# that, over the looks, is a look's cost.
looked, tx, st = loaded["looked"], max(1, loaded["tx"]), loaded["statements"]
total = base = 0
for n in ("stmt_switch", "stmt_recv", "stmt_exit"):
    r, ns = loaded["progs"].get(n, (0, 0))
    ir, ins = idle["progs"].get(n, (0, 0))
    total += ns
    base += r * ins / ir if ir else 0
    if r:
        print("  PgBackendStatus: %s %.0f ns a run over all %d runs (%.1f a transaction);"
              " %.0f ns a run in the idle run" % (n, ns / r, r, r / tx, ins / max(1, ir)))
traced = (total - base) / max(1, looked)
print("    a look at a traced backend's row %.0f ns beyond a run that looks at nothing"
      " (derived; %.1f looks a transaction, %.2f statements counted a look)"
      % (traced, looked / tx, st / max(1, looked)))
print("    per transaction: %.0f ns of BPF in all (%.0f ns of it the looks beyond that);"
      " %d transactions, %.2f statements each"
      % (total / tx, traced * looked / tx, loaded["tx"], st / tx))
ut = max(1, usdt["tx"])
tot = 0.0
parts = []
for n in ("start_multi", "start_uprobe", "query_done"):
    if n in usdt["progs"] and usdt["progs"][n][0]:
        runs, pns = usdt["progs"][n]
        tot += pns + runs * trap
        parts.append("%s %.0f ns a run (%.1f a transaction)" % (n, pns / runs, runs / ut))
print("  --usdt: %s; the trap under each %.0f ns (dbtap bench usdt)" % ("; ".join(parts), trap))
print("    per transaction: %.0f ns (programs and traps); %d transactions, %.2f statements each"
      % (tot / ut, usdt["tx"], usdt["statements"] / ut))
PY
done
