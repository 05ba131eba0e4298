#!/bin/bash
# bench/startup.sh: every command's start-up, exit and peak memory, medians of interleaved runs.
#
#	bench/startup.sh [REPEATS [BEFORE_BINARY]]   default 5 repeats
#	JOBS="wait record" bench/startup.sh ...      only those commands (names below)
#
# On one throwaway cluster under a light pgbench load (-R 200), each command runs under
# bench/lib/lifecycle.py REPEATS times, the commands (and, given one, an older dbtap
# beside this one) interleaved round-robin so that the machine's load falls on all of
# them alike. Per command: exec -> attached (the line saying it traces), final report ->
# exit, Ctrl-C -> exit, peak RSS (wait4's ru_maxrss: VmHWM at exit). Medians, with the
# smallest and largest run. Then the CPU a start-up costs, which does not wait for a
# loaded machine: perf stat's task-clock of the whole process tree for a run of -d 0.01
# (start, 10 ms of tracing, exit), mean of REPEATS. Ratios between columns are what to
# compare across machines.
REPEATS=${1:-5}
BEFORE=$2
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init startup "BPF, uprobes, perf events"
LIFE="$ROOT/bench/lib/lifecycle.py"

pg_start bench "autovacuum = off" >/dev/null || exit 1
pgbench -i -q >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
cd "$TRASH" || exit 1
pgbench -n -c 2 -R 200 -T 100000 >load.log 2>&1 &
LOAD=$!
test_atexit "kill $LOAD"

P="--pg $PGDATA -j"
all_jobs="tps latency latq count1 countall stat statq statx xid profile timeline record wait waitusdt serve"
# shellcheck disable=SC2206 # a list of names
jobs=(${JOBS:-$all_jobs})
declare -A CMD=(
	[tps]="tps $P"
	[latency]="latency usdt:postgresql:transaction__start usdt:postgresql:transaction__commit $P"
	[latq]="latency query $P"
	[count1]="count usdt:postgresql:transaction__commit $P"
	[countall]="count usdt:postgresql:* $P"
	[stat]="stat $P"
	[statq]="stat --per query $P"
	[statx]="stat --per transaction $P"
	[xid]="watch xid $P"
	[profile]="profile $P"
	[timeline]="profile --timeline $P"
	[record]="record -o $TRASH/captures $P"
	[wait]="wait $P"
	[waitusdt]="wait --usdt $P"
	[serve]="serve --pg $PGDATA --listen 127.0.0.1:0 --rescan 0"
)
declare -A NAME=(
	[tps]="tps" [latency]="latency (transaction start -> commit)" [latq]="latency query"
	[count1]="count one probe" [countall]="count 'usdt:postgresql:*'" [stat]="stat"
	[statq]="stat --per query" [statx]="stat --per transaction" [xid]="watch xid"
	[profile]="profile" [timeline]="profile --timeline" [record]="record" [wait]="wait"
	[waitusdt]="wait --usdt"
	[serve]="serve"
)
for job in "${jobs[@]}"; do
	[ -n "${CMD[$job]}" ] || { echo "unknown job '$job' (one of: $all_jobs)" >&2; exit 2; }
done
READY='^tracing |^counting|^watching |^polling |^serving http'
REPORT='"report": *"summary"'

tools="dbtap"
[ -n "$BEFORE" ] && tools="before dbtap"
for r in $(seq 1 "$REPEATS"); do
	for job in "${jobs[@]}"; do
		for t in $tools; do
			bin=$DBTAP
			[ "$t" = before ] && bin=$BEFORE
			# shellcheck disable=SC2086 # the command's words
			echo "$job $t $(python3 "$LIFE" --run 0.5 --ready "$READY" --report "$REPORT" \
				-- "$bin" ${CMD[$job]})"
		done
	done
done >runs.txt

# the CPU of a start-up, 10 ms of tracing and the exit, children included
for job in "${jobs[@]}"; do
	for t in $tools; do
		bin=$DBTAP
		[ "$t" = before ] && bin=$BEFORE
		# shellcheck disable=SC2086 # the command's words
		perf stat -x, -r "$REPEATS" -e task-clock -- "$bin" ${CMD[$job]} -d 0.01 \
			2>&1 >/dev/null | awk -F, -v j="$job" -v t="$t" '$3 == "task-clock" {
				printf "%s %s {\"cpu_ms\": %s, \"stddev\": \"%s\"}\n", j, t, $1, $4 }'
		[ "${PIPESTATUS[0]}" = 0 ] || echo "$job $t {\"cpu_ms\": null}"
	done
done >cpu.txt
for job in "${jobs[@]}"; do echo "$job ${NAME[$job]}"; done >names.txt
python3 - "$tools" "${jobs[*]}" <<'PY'
import json, statistics, sys
tools, jobs = sys.argv[1].split(), sys.argv[2].split()
names = dict(l.rstrip("\n").split(" ", 1) for l in open("names.txt"))
runs = {}
for line in open("runs.txt"):
    job, tool, js = line.split(" ", 2)
    runs.setdefault((job, tool), []).append(json.loads(js))
cpu = {}
for line in open("cpu.txt"):
    job, tool, js = line.split(" ", 2)
    if json.loads(js)["cpu_ms"] is not None:
        cpu[(job, tool)] = json.loads(js)
def cell(job, tool, k, scale, fmt):
    v = [r[k] for r in runs.get((job, tool), []) if r.get(k) is not None]
    if not v:
        return "-"
    return (fmt % (statistics.median(v) * scale)) + " (" + (fmt % (min(v) * scale)) + \
        "-" + (fmt % (max(v) * scale)) + ")"
for k, label, scale, fmt in (("attach_s", "exec -> attached, ms", 1000, "%.0f"),
                             ("exit_s", "final report -> exit, ms", 1000, "%.0f"),
                             ("stop_s", "Ctrl-C -> exit, ms", 1000, "%.0f"),
                             ("rss_kb", "peak RSS, MB", 1 / 1024, "%.1f")):
    print("\n%s, median (min-max) of %d\n" % (label, len(runs.get((jobs[0], tools[0]), []))))
    print("| command | " + " | ".join(tools) + " |")
    print("|---|" + "---|" * len(tools))
    for job in jobs:
        print("| %s | %s |" % (names[job],
                               " | ".join(cell(job, t, k, scale, fmt) for t in tools)))
print("\nCPU of a run of -d 0.01 (start, 10 ms, exit; children included), ms, "
      "perf stat's mean (stddev)\n")
print("| command | " + " | ".join(tools) + " |")
print("|---|" + "---|" * len(tools))
for job in jobs:
    c = [cpu.get((job, t)) for t in tools]
    print("| %s | %s |" % (names[job], " | ".join(
        "-" if x is None else "%.1f (%s)" % (x["cpu_ms"], x["stddev"]) for x in c)))
bad = [(j, t, r["rc"]) for (j, t), rs in runs.items() for r in rs if r["rc"] not in (0, 130)]
if bad:
    print("\nruns that failed (job, tool, exit status):", bad)
PY
