#!/bin/bash
# bench/overhead.sh: what each tracing command costs a PostgreSQL cluster under pgbench,
# measured so that a noisy machine cannot fake it: interleaved untraced/traced runs, the
# median TPS ratio and its spread, and the server's CPU time per transaction.
#
#	bench/overhead.sh [PAIRS [SECS]] [abrun.py options...]
#	    default 5 pairs of 10 s for every command, with BPF statistics and probe costs
#
# One throwaway cluster; the runs, the figures and the options are bench/lib/abrun.py's
# (--commands tps,wait,..., --workload txid|select|tpcb, --clients N, --threads N,
# --json FILE, --no-diag to skip the BPF statistics run and the probe costs).
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
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init bench-overhead "BPF, uprobes, perf events"

# a private copy of the server binary: uprobes belong to its file, so other tracers
# on this machine do not trap in this server and other clusters not in these probes
. "$ROOT/tests/lib/pgcopy.sh"
pg_start bench "autovacuum = off" || exit 1
case " ${args[*]} " in
*" --workload select "* | *" --workload tpcb "* | *" --workload=select "* | *" --workload=tpcb "*)
	pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; } ;;
esac
python3 "$ROOT/bench/lib/abrun.py" --pg-pid "$PG_PID" --pgdata "$PGDATA" --workdir "$TRASH" \
	--pairs "$PAIRS" --secs "$SECS" "${diag[@]}" "${args[@]}"
