# tests/lib/record.sh: helpers for the record tests, sourced after test-lib.sh, trace.sh, pg.sh.
#
#	heavy_start SECS [CLIENTS]  CLIENTS (4) psql clients running a CPU-heavy statement
#	                            (a function scan of a million rows, in memory) over and over for SECS
#	heavy_wait                  waits for them
#	heavy_kill                  stops them now
#	wait_line FILE PY [SECS]    waits (SECS, default 20) until a JSON line of FILE makes
#	                            the Python expression PY (over `d`) true
#	wait_below FILE VALUE [SECS] waits until a trigger's figure that record -v writes to
#	                            FILE after the call reads under VALUE: its condition stopped

HEAVY_PIDS=()
test_atexit 'heavy_kill'

heavy_start() {
	local secs=$1 n=${2:-4} i
	for i in $(seq 1 "$n"); do
		(
			end=$(($(date +%s) + secs))
			while [ "$(date +%s)" -lt "$end" ]; do
				# work_mem: the function scan's rows stay in memory, so it is CPU, not I/O
				psql -XAtq -c "SET work_mem = '256MB'" \
					-c "SELECT count(*) FROM generate_series(1, 1000000) g WHERE g % 7 = 3" \
					>/dev/null 2>>heavy.err
			done
		) &
		HEAVY_PIDS+=($!)
	done
}

heavy_wait() {
	wait "${HEAVY_PIDS[@]}"
	HEAVY_PIDS=()
}

heavy_kill() {
	local p
	# the loops first, then the psql each one runs: no new statement starts
	for p in "${HEAVY_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		pkill -P "$p" 2>/dev/null
	done
	[ ${#HEAVY_PIDS[@]} -gt 0 ] && wait "${HEAVY_PIDS[@]}" 2>/dev/null
	HEAVY_PIDS=()
	return 0
}

wait_line() {
	local end=$((SECONDS + ${3:-20}))
	while [ $SECONDS -lt $end ]; do
		python3 -c '
import json, sys
for l in open(sys.argv[1]):
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if eval(sys.argv[2]):
        sys.exit(0)
sys.exit(1)
' "$1" "$2" && return 0
		sleep 0.1
	done
	echo "no line of $1 with $2 within ${3:-20} s:"
	cat "$1"
	return 1
}

wait_below() {
	local n0 end=$((SECONDS + ${3:-20}))
	n0=$(grep -c ": .* is [^ ]*$" "$1")
	while [ $SECONDS -lt $end ]; do
		grep ": .* is [^ ]*$" "$1" | tail -n +$((n0 + 1)) |
			awk -v v="$2" '$NF + 0 < v + 0 { f = 1 } END { exit !f }' && return 0
		sleep 0.1
	done
	echo "no figure under $2 in $1 within ${3:-20} s:"
	tail -5 "$1"
	return 1
}
