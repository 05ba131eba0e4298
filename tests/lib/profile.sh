# tests/lib/profile.sh: helpers for the profile tests, sourced after test-lib.sh and trace.sh.
#
#	profloop_start OUT ARGS...  starts the profloop workload (ARGS: -w, -s SECS, -r DEPTH),
#	                            waits for its "ready" line; sets PL_PID
#	profloop_stop               kills it
#	bg_run OUT CMD ARGS...       CMD in the background, output in OUT; sets BG_PID
#	kill_after SECS PID          SIGTERM to PID in SECS seconds, in the background
#	schedstat_ns PID            the process's time on CPU so far (/proc/PID/schedstat), ns
#	folded_py SCRIPT <FILE      runs SCRIPT with `stacks`: a list of (frames, count) read
#	                            from a folded file

PL_PID=
test_atexit 'profloop_stop'

profloop_start() {
	local out=$1 i
	shift
	"$WORKLOADS/profloop" "$@" >"$out" &
	PL_PID=$!
	for i in $(seq 1 100); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "profloop did not start"
	return 1
}

profloop_stop() {
	[ -n "$PL_PID" ] && kill -KILL "$PL_PID" 2>/dev/null && wait "$PL_PID" 2>/dev/null
	PL_PID=
	return 0
}

schedstat_ns() {
	awk '{ print $1 }' "/proc/$1/schedstat"
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

# kill_after SECS PID: sends SIGTERM to PID in SECS seconds, in the background.
kill_after() {
	( sleep "$1"; kill "$2" 2>/dev/null ) &
	return 0
}

# bg_run OUT CMD ARGS...: runs CMD in the background (stdout and stderr in OUT); sets BG_PID.
bg_run() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	BG_PID=$!
	return 0
}
