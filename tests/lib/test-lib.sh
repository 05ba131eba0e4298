# tests/lib/test-lib.sh: git-style TAP harness sourced by every tests/t/tNNNN-*.sh file.
#
# A test file looks like:
#
#	#!/bin/bash
#	test_description='what this file checks'
#	. "$(dirname "$0")"/../lib/test-lib.sh
#	. "$TEST_LIB"/pg.sh              # when it needs a PostgreSQL cluster
#	test_expect_success 'title' '
#		dbtap pg -j >out &&
#		json_py "assert len(lines) >= 1" <out
#	'
#	test_done
#
# Each test body is eval'ed in the test file's shell (variables persist between
# tests), in $TRASH, with its output captured; it passes when its last command exits 0,
# so chain commands with &&. On failure the captured output is printed as "# " lines
# on stderr. DBTAP_TEST_VERBOSE=1 shows every body's output instead, DBTAP_TEST_TIMES=1
# each passed test's wall time.
# Every test file gets a fresh $TRASH = tests/t/trash.NAME; it is removed when all
# tests pass (kept on failure, or with DBTAP_TEST_KEEP=1).
#
# As in git's t/: `test_expect_success PREREQ 'title' 'body'` runs only when every
# prerequisite in the comma-separated PREREQ holds (`!NAME` negates), otherwise it is
# reported as skipped with the missing one named; `test_lazy_prereq NAME 'script'`
# defines NAME, evaluated on first use in a subshell (script exits 0: it holds);
# `test_when_finished 'cmd'` in a body runs cmd after that test, passed or failed (a
# failing cmd fails the test). Hooks in test_before_each run before every body
# (watch.sh takes the breakpoint slot baseline there).

# Each test file runs in a session of its own, so in a scheduler autogroup of its own
# (/proc/sys/kernel/sched_autogroup_enabled): the CPU is shared fairly between the
# files `make tap-test TAP_JOBS=2` runs at once, and a workload a file raises to nice
# -20, or a file's own busy threads, take from that file's share alone, not from its
# neighbour's (nice counts only inside an autogroup). This shell stays in the
# harness's session, passes INT, TERM and HUP on, and exits with the file's status;
# the file starts with INT and QUIT at their defaults (bash ignores them in a command
# started with &).
if [ -z "$DBTAP_TEST_OWN_SESSION" ]; then
	export DBTAP_TEST_OWN_SESSION=1
	env --default-signal=INT,QUIT setsid "$BASH" "$0" "$@" &
	test_file_pid=$!
	trap 'kill -INT $test_file_pid 2>/dev/null' INT
	trap 'kill -TERM $test_file_pid 2>/dev/null' TERM
	trap 'kill -HUP $test_file_pid 2>/dev/null' HUP
	while :; do
		wait $test_file_pid
		test_file_rc=$?
		kill -0 $test_file_pid 2>/dev/null || break
	done
	exit $test_file_rc
fi

TEST_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEST_ROOT=$(cd "$TEST_LIB/../.." && pwd)
TEST_NAME=$(basename "$0" .sh)
TRASH="$TEST_ROOT/tests/t/trash.$TEST_NAME"
# DBTAP_BIN: another build of dbtap (make check SANITIZE=1 sets it)
DBTAP="${DBTAP_BIN:-$TEST_ROOT/dbtap}"
WORKLOADS="$TEST_ROOT/build/workloads"
export TEST_ROOT TRASH DBTAP WORKLOADS TEST_LIB

test_count=0
test_failed=0
test_fixed=0
test_broken=0
test_atexit_cmds=()

# Runs the repository's ./dbtap, whatever the current directory.
dbtap() {
	"$DBTAP" "$@"
}

# dbtap_as USER ARGS...: runs dbtap as another user, from a copy that user can reach
# (the checkout may sit under a directory only root enters).
dbtap_as() {
	local user=$1
	shift
	if [ -z "$dbtap_copy" ]; then
		dbtap_copy=$(mktemp -d /tmp/dbtap-test-bin.XXXXXX) || return 1
		test_atexit "rm -rf '$dbtap_copy'"
		chmod 755 "$dbtap_copy" && cp "$DBTAP" "$dbtap_copy/dbtap" || return 1
	fi
	runuser -u "$user" -- "$dbtap_copy/dbtap" "$@"
}

say() {
	printf '# %s\n' "$*"
}

# Registers a command run when the test file exits, however it exits (last in, first
# out). pg.sh uses it to stop clusters.
test_atexit() {
	test_atexit_cmds=("$1" "${test_atexit_cmds[@]}")
}

test_run_atexit() {
	local c
	for c in "${test_atexit_cmds[@]}"; do
		eval "$c" >/dev/null 2>&1
	done
	test_atexit_cmds=()
}

test_exit_trap() {
	local rc=$?
	trap - EXIT
	# a body interrupted half-way still gets its test_when_finished commands
	eval_ret=$rc
	eval "$test_cleanup" >/dev/null 2>&1
	test_run_atexit
	exit $rc
}
trap test_exit_trap EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

test_bail() {
	printf 'Bail out! %s\n' "$*"
	exit 1
}

[ -x "$DBTAP" ] || test_bail "$DBTAP is not built: run make"

rm -rf "$TRASH" || test_bail "cannot remove $TRASH"
mkdir -p "$TRASH" || test_bail "cannot create $TRASH"
# PostgreSQL clusters run as the postgres user inside $TRASH.
chmod 755 "$TRASH"
cd "$TRASH" || test_bail "cannot cd to $TRASH"

test_show_output() {
	if [ -s "$TRASH/.test-output" ]; then
		sed 's/^/#   /' "$TRASH/.test-output" >&2
	fi
}

test_cleanup=:
test_before_each=()
declare -A test_prereq_state=()
declare -A test_prereq_script=()

# test_when_finished CMD: runs CMD once the current test's body is done, last
# registered first; a failing CMD fails the test (git's semantics).
test_when_finished() {
	test_cleanup="{ $*
} && (exit \"\$eval_ret\"); eval_ret=\$?; $test_cleanup"
}

# test_lazy_prereq NAME 'script': NAME holds when script exits 0, asked once.
test_lazy_prereq() {
	test_prereq_script[$1]=$2
}

# test_set_prereq NAME: NAME holds.
test_set_prereq() {
	test_prereq_state[$1]=1
}

# test_have_prereq NAME[,NAME...]: every one holds (!NAME: NAME does not hold).
# Sets test_missing_prereq to the first that fails.
test_have_prereq() {
	local p name want have
	for p in ${1//,/ }; do
		name=${p#!}
		want=1
		[ "$name" != "$p" ] && want=0
		if [ -z "${test_prereq_state[$name]}" ]; then
			test_prereq_state[$name]=0
			if [ -n "${test_prereq_script[$name]}" ] &&
			   (mkdir -p "$TRASH/.prereq-$name" && cd "$TRASH/.prereq-$name" &&
			    eval "${test_prereq_script[$name]}") </dev/null >/dev/null 2>&1; then
				test_prereq_state[$name]=1
			fi
			rm -rf "$TRASH/.prereq-$name"
		fi
		have=${test_prereq_state[$name]}
		if [ "$have" != "$want" ]; then
			test_missing_prereq=$p
			return 1
		fi
	done
	return 0
}

# A body in a function of its own: a `return` in it ends the body, not test_run_body,
# whose test_when_finished commands (a load loop's kill) must still run.
test_eval_body() {
	eval "$1"
}

# Runs body $1 in the current shell, then its test_when_finished commands; returns
# the status.
test_run_body() {
	local rc h out=/dev/stderr
	cd "$TRASH" || return 1
	[ -z "$DBTAP_TEST_VERBOSE" ] && out="$TRASH/.test-output" && : >"$out"
	test_cleanup=:
	for h in "${test_before_each[@]}"; do
		eval "$h" </dev/null >>"$out" 2>&1
	done
	test_eval_body "$1" </dev/null >>"$out" 2>&1
	eval_ret=$?
	cd "$TRASH" || return 1
	eval "$test_cleanup" </dev/null >>"$out" 2>&1
	rc=$eval_ret
	test_cleanup=:
	cd "$TRASH" || return 1
	return $rc
}

# test_prereq_skip PREREQ 'title': true (and the skip reported) when PREREQ is missing.
test_prereq_skip() {
	[ -z "$1" ] && return 1
	test_have_prereq "$1" && return 1
	test_count=$((test_count + 1))
	printf 'ok %d # skip %s (missing %s)\n' "$test_count" "$2" "$test_missing_prereq"
	return 0
}

# test_expect_success [PREREQ] 'title' 'body'
test_expect_success() {
	local prereq=
	[ $# = 3 ] && { prereq=$1; shift; }
	[ $# = 2 ] || test_bail "test_expect_success needs 2 or 3 arguments, got $#: $1"
	test_prereq_skip "$prereq" "$1" && return 0
	test_count=$((test_count + 1))
	local test_start_=$EPOCHREALTIME
	if test_run_body "$2"; then
		printf 'ok %d - %s\n' "$test_count" "$1"
		test_time "$test_start_" "$1"
	else
		test_failed=$((test_failed + 1))
		printf 'not ok %d - %s\n' "$test_count" "$1"
		printf '#\t%s\n' "$(printf '%s' "$2" | sed '2,$s/^/#\t/')" >&2
		test_show_output
	fi
}

# test_time START TITLE: with DBTAP_TEST_TIMES set, the wall time of a passed test
# since START ($EPOCHREALTIME) on stderr, to find where a file spends its time.
test_time() {
	[ -n "$DBTAP_TEST_TIMES" ] || return 0
	local us=$(( 10#${EPOCHREALTIME//[.,]/} - 10#${1//[.,]/} ))
	printf '# %4d.%02d s  %s %d - %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) \
		"$TEST_NAME" "$test_count" "$2" >&2
}

# test_expect_failure [PREREQ] 'title' 'body': a known breakage, reported as TODO.
test_expect_failure() {
	local prereq=
	[ $# = 3 ] && { prereq=$1; shift; }
	[ $# = 2 ] || test_bail "test_expect_failure needs 2 or 3 arguments, got $#: $1"
	test_prereq_skip "$prereq" "$1" && return 0
	test_count=$((test_count + 1))
	if test_run_body "$2"; then
		test_fixed=$((test_fixed + 1))
		printf 'ok %d - %s # TODO known breakage vanished\n' "$test_count" "$1"
	else
		test_broken=$((test_broken + 1))
		printf 'not ok %d - %s # TODO known breakage\n' "$test_count" "$1"
	fi
}

# test_skip 'title' 'reason': one test that cannot run here, and why.
test_skip() {
	test_count=$((test_count + 1))
	printf 'ok %d # skip %s (%s)\n' "$test_count" "$1" "$2"
}

# test_skip_all 'reason': the whole file cannot run on this machine.
test_skip_all() {
	printf '1..0 # SKIP %s\n' "$*"
	exit 0
}

test_done() {
	printf '1..%d\n' "$test_count"
	if [ "$test_failed" -gt 0 ]; then
		say "failed $test_failed among $test_count test(s); output kept in $TRASH"
		exit 1
	fi
	test_run_atexit
	cd "$TEST_ROOT/tests/t" && [ -z "$DBTAP_TEST_KEEP" ] && rm -rf "$TRASH"
	exit 0
}

# Helpers for test bodies.

# test_must_fail CMD...: CMD exits non-zero, and not because of a signal.
test_must_fail() {
	"$@"
	local rc=$?
	if [ $rc = 0 ]; then
		echo "test_must_fail: command succeeded: $*"
		return 1
	elif [ $rc -gt 128 ]; then
		echo "test_must_fail: command died of signal $((rc - 128)): $*"
		return 1
	fi
	return 0
}

# test_expect_code N CMD...: CMD exits with status N.
test_expect_code() {
	local want=$1
	shift
	"$@"
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "test_expect_code: want exit $want, got $rc: $*"
		return 1
	fi
	return 0
}

# test_cmp EXPECTED ACTUAL
test_cmp() {
	diff -u "$@"
}

# test_must_be_empty FILE: shows the file when it is not empty.
test_must_be_empty() {
	if [ -s "$1" ]; then
		echo "test_must_be_empty: $1 is not empty:"
		cat "$1"
		return 1
	fi
}

# test_grep PATTERN FILE: grep that shows the file when the pattern is missing.
test_grep() {
	if ! grep -q -e "$1" "$2"; then
		echo "test_grep: '$1' not found in $2:"
		cat "$2"
		return 1
	fi
}

# wait_for_line FILE RE [SECS]: waits (SECS, default 30: the machine may be loaded)
# until FILE has a line matching RE (grep -e); shows the file when none came.
wait_for_line() {
	wait_for_start "" "$1" "$2" "${3:-30}" && return 0
	echo "wait_for_line: '$2' never appeared in $1 within ${3:-30} s:"
	cat "$1"
	return 1
}

# wait_for_start PID FILE RE [SECS]: waits (SECS, default 60) until FILE has a line
# matching RE (grep -e) while PID, a background job of this shell, runs (none: "" for
# PID): a tool's "attached" line. 0 once FILE has it; 1 when PID exited first (its
# exit status in START_STATUS); 2 when SECS passed. Says nothing: the caller knows
# what to tell.
wait_for_start() {
	local i
	for i in $(seq 1 $((${4:-60} * 20))); do
		grep -q -e "$3" "$2" 2>/dev/null && return 0
		if [ -n "$1" ] && ! kill -0 "$1" 2>/dev/null; then
			# the line may have come with the exit
			grep -q -e "$3" "$2" 2>/dev/null && return 0
			wait "$1"
			START_STATUS=$?
			return 1
		fi
		sleep 0.05
	done
	return 2
}

# bp_slots_free: how many hardware breakpoint slots this process can take now (0-4,
# build/workloads/bpslots). Other tracers on the machine hold some at times: tests
# compare with a baseline taken at their start (bp_slots_back), never with 4.
bp_slots_free() {
	"$WORKLOADS"/bpslots 4 2>/dev/null
}

# bp_slots_back N: at least N slots are free again (retried for 30 s: a tracer of
# another test may hold one for a moment).
bp_slots_back() {
	local n i
	for i in $(seq 1 60); do
		n=$(bp_slots_free)
		[ -n "$n" ] && [ "$n" -ge "$1" ] && return 0
		sleep 0.5
	done
	echo "only ${n:-?} hardware breakpoint slots can be taken, $1 could at the start"
	return 1
}

# json_py 'PYTHON' < NDJSON: runs PYTHON with `lines` (every JSON object read) and
# `d` (the last one); fails when an assert fails or the input is not NDJSON.
json_py() {
	python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
d = lines[-1] if lines else None
exec(sys.argv[1])
' "$1"
}
