# tests/lib/watch.sh: helpers for dbtap watch's tests, sourced after test-lib.sh.
#
#	watch_start OUT ARGS...  runs `dbtap watch ARGS` in the background (stdout in OUT,
#	                         stderr in OUT.err) and returns once it is attached (its
#	                         "watching"/"polling" line), or fails if it exits first.
#	                         Sets WATCH_PID.
#	watch_stop [SIGNAL]      sends SIGINT (or SIGNAL), waits, returns dbtap's status
#	watch_wait               waits for dbtap to end by itself, returns its status
#	slots_free               as many breakpoint slots are free as at the start of the
#	                         test (slots_base, taken before every test body)
#	xid_calls N [PIDFILE]    one new backend runs `select txid_current()` N times; its
#	                         pg_backend_pid() goes to PIDFILE, the values to stdout

WATCH_PID=
test_atexit 'watch_kill'

watch_kill() {
	[ -n "$WATCH_PID" ] && kill -KILL "$WATCH_PID" 2>/dev/null
	WATCH_PID=
}

watch_start() {
	local out=$1 try
	shift
	watch_kill
	# Other tests on this machine may hold every breakpoint slot for a moment: what
	# is tested here is counting, so wait for a slot (up to 30 s) rather than fail.
	for try in $(seq 1 60); do
		# "$DBTAP" itself, not the dbtap function: $! must be dbtap's pid for signals.
		"$DBTAP" watch "$@" >"$out" 2>"$out.err" </dev/null &
		WATCH_PID=$!
		wait_for_start "$WATCH_PID" "$out.err" '^\(watching\|polling\) '
		case $? in
		0)	return 0 ;;
		1)	WATCH_PID=
			if grep -q "no free hardware breakpoint slot" "$out.err"; then
				sleep 0.5
				continue
			fi
			echo "dbtap watch exited with $START_STATUS before attaching:" ;;
		*)	echo "dbtap watch did not attach within 60 s:" ;;
		esac
		cat "$out.err"
		return 1
	done
	echo "no breakpoint slot came free within 30 s:"
	cat "$out.err"
	return 1
}

watch_stop() {
	local rc
	kill -"${1:-INT}" "$WATCH_PID" || return 1
	wait "$WATCH_PID"
	rc=$?
	WATCH_PID=
	return $rc
}

watch_wait() {
	local rc
	wait "$WATCH_PID"
	rc=$?
	WATCH_PID=
	return $rc
}

# Other tracers on the machine may hold slots: each test is compared with what was
# free when it started.
slots_base=0
test_before_each+=('slots_base=$(bp_slots_free)')
slots_free() {
	bp_slots_back "$slots_base"
}

xid_calls() {
	local n=$1 pidfile=${2:-/dev/null} out
	out=$(mktemp xid_calls.XXXXXX) || return 1
	{
		echo "select pg_backend_pid();"
		for i in $(seq 1 "$n"); do
			echo "select txid_current();"
		done
	} | psql -XAtq -v ON_ERROR_STOP=1 -f - >"$out" || return 1
	head -n1 "$out" >"$pidfile" &&
	tail -n +2 "$out" &&
	rm -f "$out"
}

# watched_start NAME N THREADS [PREFIX...]: starts the watched workload (optionally
# under PREFIX, e.g. setarch -R), waits until it is ready; its pid goes to NAME.pid.
# watched_go NAME: lets its threads write and waits for them to finish.
watched_start() {
	local name=$1 n=$2 threads=$3
	shift 3
	rm -f "$name.go" "$name.out"
	"$@" "$WORKLOADS"/watched "$n" "$threads" "$name.go" >"$name.out" </dev/null &
	echo $! >"$name.pid"
	test_atexit "kill $! 2>/dev/null"
	wait_for_line "$name.out" '^ready'
}

watched_go() {
	local name=$1
	touch "$name.go"
	wait_for_line "$name.out" '^done'
}
