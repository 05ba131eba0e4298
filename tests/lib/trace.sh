# tests/lib/trace.sh: helpers for the tps/latency/count tests, sourced after test-lib.sh.
#
#	trace_start OUT CMD ARGS...  runs `dbtap CMD ARGS` in the background (stdout in OUT,
#	                             stderr in OUT.err), returns once it is attached (its
#	                             "tracing" line), fails if it exits first. Sets TRACE_PID.
#	trace_stop [SIGNAL]          sends SIGINT (or SIGNAL), waits, returns dbtap's status
#	trace_wait                   waits for dbtap to end by itself, returns its status
#	funcloop_start OUT ARGS...   starts the funcloop workload waiting for SIGUSR1; sets
#	                             LOOP_PID and LOOP_SEMA (its USDT semaphore's address)
#	read_u16 PID ADDR            the 2-byte value at ADDR in PID, read from /proc/PID/mem

TRACE_PID=
LOOP_PID=
test_atexit 'trace_kill'

trace_kill() {
	[ -n "$TRACE_PID" ] && kill -KILL "$TRACE_PID" 2>/dev/null
	[ -n "$LOOP_PID" ] && kill -KILL "$LOOP_PID" 2>/dev/null
	TRACE_PID=
	LOOP_PID=
}

trace_start() {
	local out=$1
	shift
	# Not the dbtap function: $! must be dbtap itself, which the signals go to.
	"$DBTAP" "$@" >"$out" 2>"$out.err" </dev/null &
	TRACE_PID=$!
	wait_for_start "$TRACE_PID" "$out.err" '^tracing '
	case $? in
	0)	return 0 ;;
	1)	echo "dbtap $1 exited with $START_STATUS before attaching:"
		TRACE_PID= ;;
	*)	echo "dbtap $1 did not attach within 60 s:" ;;
	esac
	cat "$out.err"
	return 1
}

trace_stop() {
	local rc
	kill -"${1:-INT}" "$TRACE_PID" || return 1
	wait "$TRACE_PID"
	rc=$?
	TRACE_PID=
	return $rc
}

trace_wait() {
	local rc
	wait "$TRACE_PID"
	rc=$?
	TRACE_PID=
	return $rc
}

funcloop_start() {
	local out=$1
	shift
	"$WORKLOADS/funcloop" "$@" >"$out" &
	LOOP_PID=$!
	wait_for_line "$out" '^pid ' &&
	LOOP_SEMA=$(awk '/^pid/ { print $4 }' "$out")
}

funcloop_wait() {
	local rc
	wait "$LOOP_PID"
	rc=$?
	LOOP_PID=
	return $rc
}

read_u16() {
	python3 -c '
import sys
pid, addr = int(sys.argv[1]), int(sys.argv[2], 16)
with open("/proc/%d/mem" % pid, "rb") as f:
    f.seek(addr)
    print(int.from_bytes(f.read(2), "little"))
' "$1" "$2"
}

# usdt_semaphore PID BINARY NAME: the semaphore of USDT probe NAME in the running
# process PID, read from its memory: the note's address (readelf) plus the load bias
# (the binary's mapping at file offset 0 in /proc/PID/maps; first PT_LOAD at vaddr 0).
usdt_semaphore() {
	local sema start
	sema=$(readelf -n "$2" | awk -v n="$3" '$1 == "Name:" && $2 == n { getline; print $6; exit }')
	[ -n "$sema" ] || { echo "no semaphore for $3 in $2"; return 1; }
	start=$(awk -v b="$2" '$6 == b && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps")
	[ -n "$start" ] || { echo "$2 is not mapped in $1"; return 1; }
	read_u16 "$1" "$(printf '0x%x' $((0x$start + sema)))"
}
