# tests/lib/timeline.sh: helpers for the timeline and record tests, sourced after test-lib.sh.
#
#	tlphases_start OUT ARGS...  starts the tlphases workload (waits for SIGUSR1); sets TLP_PID
#	tlphases_go                 sends it SIGUSR1, waits for its "done" line (20 s at most)
#	tlphases_stop               kills it
#	rss_peak_kb PID             VmHWM of PID, in kB

TLP_PID=
test_atexit 'tlphases_stop'

tlphases_start() {
	local out=$1 i
	shift
	"$WORKLOADS/tlphases" "$@" >"$out" &
	TLP_PID=$!
	TLP_OUT=$out
	for i in $(seq 1 100); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "tlphases did not start"
	return 1
}

tlphases_go() {
	local i
	kill -USR1 "$TLP_PID" || return 1
	for i in $(seq 1 200); do
		grep -q '^done' "$TLP_OUT" && return 0
		sleep 0.1
	done
	echo "tlphases did not finish"
	return 1
}

tlphases_stop() {
	[ -n "$TLP_PID" ] && kill -KILL "$TLP_PID" 2>/dev/null && wait "$TLP_PID" 2>/dev/null
	TLP_PID=
	return 0
}

rss_peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}
