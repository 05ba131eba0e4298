# bench/lib/bench.sh: what the bench/ scripts share around one throwaway cluster: the
# cluster itself, the kernel's BPF statistics, the programs one dbtap process holds, and
# waiting for a tracer to start. Sourced by bash scripts in bench/; then:
#
#	bench_cluster NAME WHY     standalone_init NAME WHY (tests/lib/standalone.sh: root,
#	                           ./dbtap, $TRASH removed at exit), cluster "bench" from a
#	                           private copy of the server with pgbench's tables, cd $TRASH
#	bench_bpf_stats            turns kernel.bpf_stats_enabled on, restored at exit
#	bench_prog_stats PID       "NAME RUNS NS" of each BPF program dbtap pid PID holds
#	bench_wait_line RE FILE    waits up to 10 s for a line matching RE (grep) in FILE;
#	                           on a timeout says so with FILE's text on stderr, returns 1
#	bench_startup NAME RE CMD...  5 runs of CMD through bench/lib/lifecycle.py (each
#	                           stopped by SIGINT 0.5 s after it attached): a row with
#	                           NAME, the median ms from spawn to a line matching RE
#	                           (Python re) on its stdout or stderr, and the peak RSS

. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/standalone.sh"

bench_cluster() {
	standalone_init "$1" "$2"
	standalone_cluster init
	cd "$TRASH" || exit 1
}

# Each program's own run count and run time, a figure the machine's noise does not blur.
bench_bpf_stats() {
	local was
	was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null)
	sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null
	test_atexit "sysctl -q -w kernel.bpf_stats_enabled=${was:-0}"
}

# Other tracers on the machine may run programs of the same names (stat and wait both
# have an on_switch): ours are the ones whose ids dbtap's own fds hold (its fdinfo).
bench_prog_stats() {
	bpftool -j prog show | python3 -c '
import json, os, re, sys
held = set()
d = "/proc/%s/fdinfo" % sys.argv[1]
for fd in os.listdir(d):
    try:
        m = re.search(r"^prog_id:\s*(\d+)", open(d + "/" + fd).read(), re.M)
    except OSError:
        continue
    if m:
        held.add(int(m.group(1)))
for p in json.load(sys.stdin):
    if p["id"] in held and "run_cnt" in p:
        print(p.get("name", "?"), p["run_cnt"], p["run_time_ns"])' "$1"
}

bench_wait_line() {
	local i
	for i in $(seq 1 200); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "error: no line matching '$1' in $2 after 10 s:" >&2
	cat "$2" >&2
	return 1
}

bench_startup() {
	local name=$1 ready=$2 i
	shift 2
	for i in 1 2 3 4 5; do
		python3 "$ROOT/bench/lib/lifecycle.py" --ready "$ready" --run 0.5 -- "$@"
	done | python3 -c '
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
ok = [r for r in runs if r["attach_s"] is not None]
killed = sum(1 for r in runs if r.get("killed"))
if ok:
    print("%-24s %18.1f %14.1f%s" % (sys.argv[1], 1000 * statistics.median(r["attach_s"] for r in ok),
                                    max(r["rss_kb"] for r in ok) / 1024,
                                    "  (%d of %d killed: no exit 10 s after SIGINT)" % (killed, len(runs))
                                    if killed else ""))
else:
    print("%-24s %18s %14s" % (sys.argv[1], "failed", "-"))' "$name"
}
