#!/bin/bash
# bench/vs-bpftrace.sh: dbtap beside bpftrace for the same jobs, measured in one run.
#
#	bench/vs-bpftrace.sh [REPEATS [BEFORE_BINARY]]   default 3 repeats
#
# Jobs: count one USDT probe, count every USDT probe of the server (usdt:postgresql:*),
# commits per backend, a latency histogram of a function (PortalRun). For each, both
# tools run REPEATS times, interleaved, on one throwaway cluster under pgbench load:
# time from exec to attached (the "tracing" line, bpftrace's "Attaching"), time from
# Ctrl-C to the exit and from the final report to the exit, peak RSS (wait4's ru_maxrss). Medians, and the ratio
# bpftrace / dbtap. BEFORE_BINARY, an older dbtap, runs beside them (before/after
# figures in one run). Then per-event costs from `dbtap bench --vs-bpftrace --quick`.
# Ratios measured side by side, never absolute targets: machines differ.
REPEATS=${1:-3}
BEFORE=$2
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init vs-bpftrace "BPF, uprobes"
LIFE="$ROOT/bench/lib/lifecycle.py"

pg_start bench "autovacuum = off" || exit 1
pgbench -i -q >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1
BIN=$(readlink "/proc/$PG_PID/exe")
command -v bpftrace >/dev/null || { echo "error: bpftrace is not installed" >&2; exit 1; }
pgbench -n -c 2 -T 100000 >load.log 2>&1 &
LOAD=$!
test_atexit "kill $LOAD"

cat >one.bt <<BT
usdt:$BIN:postgresql:transaction__commit { @[probe] = count(); }
BT
cat >all.bt <<BT
usdt:$BIN:postgresql:* { @[probe] = count(); }
BT
cat >pid.bt <<BT
usdt:$BIN:postgresql:transaction__commit { @[pid] = count(); }
BT
cat >lat.bt <<BT
uprobe:$BIN:PortalRun { @s[tid] = nsecs; }
uretprobe:$BIN:PortalRun /@s[tid]/ { @us = hist((nsecs - @s[tid]) / 1000); delete(@s[tid]); }
BT

D="--pg $PGDATA -j"
declare -A DBT=(
	[one]="count usdt:postgresql:transaction__commit $D"
	[all]="count usdt:postgresql:* $D"
	[pid]="count usdt:postgresql:transaction__commit --by pid $D"
	[lat]="latency uprobe:$BIN:PortalRun uretprobe:$BIN:PortalRun $D"
)
DESC_one="count one USDT probe"
DESC_all="count usdt:postgresql:* ($(readelf -n "$BIN" | grep -c 'Name: ') sites)"
DESC_pid="commits per backend"
DESC_lat="latency histogram of a function"

# run TOOL JOB: one lifecycle line of JSON
run() {
	case $1 in
	dbtap) python3 "$LIFE" --run 1 -- "$DBTAP" ${DBT[$2]} ;;
	before) python3 "$LIFE" --run 1 --report '"summary": *true|"report": *"summary"' -- \
		"$BEFORE" ${DBT[$2]} ;;
	bpftrace) python3 "$LIFE" --run 1 --ready '^Attaching' --report '^@' -- bpftrace "$2.bt" ;;
	esac
}

tools="dbtap bpftrace"
[ -n "$BEFORE" ] && tools="before dbtap bpftrace"
for job in one all pid lat; do
	for r in $(seq 1 "$REPEATS"); do
		for t in $tools; do
			echo "$job $t $(run $t $job)"
		done
	done
done >runs.txt

python3 - "$tools" <<'PY'
import json, statistics, sys
tools = sys.argv[1].split()
runs = {}
for line in open("runs.txt"):
    job, tool, js = line.split(" ", 2)
    runs.setdefault((job, tool), []).append(json.loads(js))
names = {"one": "count one USDT probe", "all": "count usdt:postgresql:*",
         "pid": "commits per backend", "lat": "latency histogram of a function"}
def val(r, k):
    if k == "stop_s":  # Ctrl-C -> exit: bpftrace detaches before it prints its maps
        return None if r["exit_s"] is None else r["report_s"] + r["exit_s"]
    return r[k]
def med(job, tool, k):
    v = [val(r, k) for r in runs.get((job, tool), []) if val(r, k) is not None]
    return statistics.median(v) if v else None
print("| job | figure | " + " | ".join(tools) + " | bpftrace / dbtap |")
print("|---|---|" + "---|" * len(tools) + "---|")
for job in ("one", "all", "pid", "lat"):
    for k, label, unit in (("attach_s", "exec -> attached", "ms"),
                           ("stop_s", "Ctrl-C -> exit", "ms"), ("exit_s", "report -> exit", "ms"),
                           ("rss_kb", "peak RSS", "MB")):
        vals = [med(job, t, k) for t in tools]
        cells = []
        for v in vals:
            if v is None:
                cells.append("-")
            elif unit == "ms":
                cells.append("%.1f ms" % (v * 1000))
            else:
                cells.append("%.1f MB" % (v / 1024))
        d, b = med(job, "dbtap", k), med(job, "bpftrace", k)
        ratio = "%.1fx" % (b / d) if d and b else "-"
        print("| %s | %s | %s | %s |" % (names[job], label, " | ".join(cells), ratio))
PY
echo
nice -n 5 "$DBTAP" bench --quick --vs-bpftrace usdt uprobe-nop 2>&1 | tail -n 8
