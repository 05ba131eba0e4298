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
# on stderr. DBTAP_TEST_VERBOSE=1 shows every body's output instead.
# Every test file gets a fresh $TRASH = tests/t/trash.NAME; it is removed when all
# tests pass (kept on failure, or with DBTAP_TEST_KEEP=1).

TEST_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEST_ROOT=$(cd "$TEST_LIB/../.." && pwd)
TEST_NAME=$(basename "$0" .sh)
TRASH="$TEST_ROOT/tests/t/trash.$TEST_NAME"
DBTAP="$TEST_ROOT/dbtap"
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

# Runs body $1 in the current shell; returns its status.
test_run_body() {
	local rc
	cd "$TRASH" || return 1
	if [ -n "$DBTAP_TEST_VERBOSE" ]; then
		eval "$1" </dev/null >&2
		rc=$?
	else
		eval "$1" </dev/null >"$TRASH/.test-output" 2>&1
		rc=$?
	fi
	cd "$TRASH" || return 1
	return $rc
}

# test_expect_success 'title' 'body'
test_expect_success() {
	[ $# = 2 ] || test_bail "test_expect_success needs 2 arguments, got $#: $1"
	test_count=$((test_count + 1))
	if test_run_body "$2"; then
		printf 'ok %d - %s\n' "$test_count" "$1"
	else
		test_failed=$((test_failed + 1))
		printf 'not ok %d - %s\n' "$test_count" "$1"
		printf '#\t%s\n' "$(printf '%s' "$2" | sed '2,$s/^/#\t/')" >&2
		test_show_output
	fi
}

# test_expect_failure 'title' 'body': a known breakage, reported as TODO.
test_expect_failure() {
	[ $# = 2 ] || test_bail "test_expect_failure needs 2 arguments, got $#: $1"
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
