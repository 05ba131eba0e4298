# tests/lib/stat.sh: helpers for the dbtap stat tests, sourced after test-lib.sh.
#
#	wl_start NAME ARGS...   starts build/workloads/pagetouch ARGS with output in NAME.out,
#	                        waits for its "ready" line, sets wl_pid (killed at exit)
#	stat_start OUT ARGS...  starts `dbtap -j stat ARGS` with stdout in OUT and stderr in
#	                        OUT.err, waits until it says it is counting; sets stat_pid
#	stat_stop               Ctrl-C (SIGINT) to it and waits: its exit status
#	schedstat PID           nanoseconds PID has run (/proc/PID/schedstat, first field)
#	prerequisites PMU (a hardware PMU: perf type 4 exists) and SMP (2 CPUs or more)

wl_start() {
	local name=$1
	shift
	"$WORKLOADS/pagetouch" "$@" >"$name.out" 2>&1 &
	wl_pid=$!
	test_atexit "kill $wl_pid"
	wait_for_line "$name.out" '^ready'
}

stat_start() {
	local out=$1
	shift
	"$DBTAP" -j stat "$@" >"$out" 2>"$out.err" &
	stat_pid=$!
	test_atexit "kill $stat_pid"
	wait_for_start $stat_pid "$out.err" '^counting' && return 0
	echo "dbtap stat did not start:"
	cat "$out.err"
	return 1
}

stat_stop() {
	kill -INT $stat_pid
	wait $stat_pid
}

schedstat() {
	cut -d' ' -f1 "/proc/$1/schedstat"
}

test_lazy_prereq PMU 'grep -qx 4 /sys/bus/event_source/devices/*/type'
test_lazy_prereq SMP 'test "$(nproc)" -ge 2'
