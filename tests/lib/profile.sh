# tests/lib/profile.sh: helpers for the profile, timeline and record tests, sourced after test-lib.sh and trace.sh.
#
#	workload_start VAR OUT NAME ARGS...  starts the workload NAME (output in OUT) in a
#	                            session of its own, waits for its "ready" line; its pid
#	                            in the variable VAR
#	workload_kill VAR           kills the workload whose pid is in VAR, empties VAR
#	profloop_start OUT ARGS...  the profloop workload (ARGS: -w, -s SECS, -r DEPTH); sets
#	                            PL_PID
#	profloop_stop               kills it
#	tlphases_start OUT ARGS...  the tlphases workload (waits for SIGUSR1); sets TLP_PID
#	tlphases_go                 sends it SIGUSR1, waits for its "done" line (30 s at most)
#	tlphases_stop               kills it
#	bg_run OUT CMD ARGS...       CMD in the background, output in OUT; sets BG_PID
#	schedstat_ns PID            the process's time on CPU so far (/proc/PID/schedstat), ns
#	rss_peak_kb PID             VmHWM of PID, in kB
#	folded_py SCRIPT <FILE      runs SCRIPT with `stacks`: a list of (frames, count) read
#	                            from a folded file

PL_PID=
TLP_PID=
test_atexit 'profloop_stop; tlphases_stop'

# A busy workload in a session, so a scheduler autogroup, of its own (setsid execs it:
# $! is the workload): on a loaded machine it gets a share of the CPU equal to each
# other session's, enough samples for shares and stacks to mean something. Raised to
# nice -20 in the test file's own group instead, it would take that group's weight from
# dbtap on every CPU (a group's weight is spread over its CPUs by its tasks' weights):
# dbtap itself got a few per cent of a CPU and took seconds to refuse an option.
workload_start() {
	local var=$1 out=$2 name=$3
	shift 3
	setsid "$WORKLOADS/$name" "$@" >"$out" &
	printf -v "$var" %s $!
	wait_for_line "$out" '^ready'
}

workload_kill() {
	local pid=${!1}
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	printf -v "$1" %s ""
	return 0
}

profloop_start() {
	workload_start PL_PID "$1" profloop "${@:2}"
}

profloop_stop() {
	workload_kill PL_PID
}

tlphases_start() {
	TLP_OUT=$1
	workload_start TLP_PID "$1" tlphases "${@:2}"
}

tlphases_go() {
	kill -USR1 "$TLP_PID" &&
	wait_for_line "$TLP_OUT" '^done'
}

tlphases_stop() {
	workload_kill TLP_PID
}

schedstat_ns() {
	awk '{ print $1 }' "/proc/$1/schedstat"
}

rss_peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

folded_py() {
	python3 -c '
import sys
stacks = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    frames, _, count = line.rpartition(" ")
    stacks.append((frames.split(";"), int(count)))
exec(sys.argv[1])
' "$1"
}

# bg_run OUT CMD ARGS...: runs CMD in the background (stdout and stderr in OUT); sets BG_PID.
bg_run() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	BG_PID=$!
	return 0
}
