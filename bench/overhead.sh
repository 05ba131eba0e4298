#!/bin/bash
# bench/overhead.sh: what each tracing command costs a PostgreSQL cluster under pgbench,
# measured so that a noisy machine cannot fake it: interleaved untraced/traced runs, the
# median TPS ratio and its spread, and the server's CPU time per transaction.
#
#	bench/overhead.sh [PAIRS [SECS]] [abrun.py options...]
#	bench/lib/abtable.py FILE.json   a run saved with --json FILE, as markdown
#	    default 5 pairs of 10 s for every command, with BPF statistics and probe costs
#
# One throwaway cluster, from a private copy of the server binary; the runs, the figures and the options are bench/lib/abrun.py's
# (--commands tps,wait,..., --workload txid|select|tpcb, --builtin tpcb-like (pgbench's
# built-in script of that name, -b; simple-update, select-only), --clients N, --threads N,
# --json FILE, --no-diag to skip the BPF statistics run and the probe costs, --perf to
# sample the backends in that run: the trap's kernel path and the programs per transaction).
# Ratios measured side by side, never absolute targets: machines differ.
PAIRS=5
SECS=10
case $1 in [0-9]*) PAIRS=$1; shift ;; esac
case $1 in [0-9]*) SECS=$1; shift ;; esac
diag=(--diag --probe-cost)
args=()
for a in "$@"; do
	if [ "$a" = --no-diag ]; then diag=(); else args+=("$a"); fi
done
# --perf needs perf, which `make deps` does not install: before a cluster is made
case " ${args[*]} " in *" --perf "*)
	command -v perf >/dev/null || {
		echo "error: --perf needs perf, which is not installed (not found in PATH)" >&2
		echo "hint: apt-get install linux-perf, or leave --perf out" >&2
		exit 1
	} ;;
esac
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init bench-overhead "BPF, uprobes, perf events"

# pgbench's tables only for the workloads that use them
case " ${args[*]} " in
*" --workload select "* | *" --workload tpcb "* | *" --workload=select "* | *" --workload=tpcb "* | \
*" --builtin "* | *" --builtin="*)
	standalone_cluster init ;;
*)	standalone_cluster ;;
esac
python3 "$ROOT/bench/lib/abrun.py" --pg-pid "$PG_PID" --pgdata "$PGDATA" --workdir "$TRASH" \
	--pairs "$PAIRS" --secs "$SECS" "${diag[@]}" "${args[@]}"
