#!/bin/bash
# t0110: the clusters of bench/ scripts (tests/lib/standalone.sh) die with the script.
test_description='standalone.sh: a SIGKILLed or exec-ing bench script leaves no cluster behind'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

# Should the watchdog fail: the stand-in's cluster is not left running.
left=
test_atexit 'for d in $left; do runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$d/bench/data" -m immediate stop; rm -rf "$d"; done'

# A bench script as bench/*.sh are: standalone_init, a cluster, then $1 (its work),
# which calls ready once the test may act.
standin() {
	cat >standin.sh <<-EOF
	. "$TEST_ROOT/tests/lib/standalone.sh"
	standalone_init sigkill "it starts a cluster"
	pg_start bench "autovacuum = off" || exit 1
	ready() { echo "\$TRASH \$PG_PID \$(realpath "\$PGDATA")" >"$PWD/started"; }
	$1
	EOF
	rm -f started
}

# Waits for the stand-in's cluster; sets trash, pm (postmaster pid), data.
started() {
	local i
	for i in $(seq 1 600); do
		test -s started && break
		sleep 0.1
	done
	read trash pm data <started && left="$left $trash" && test -n "$pm" && test -e "/proc/$pm"
}

# Nothing of the stand-in's cluster left: no postmaster in its data directory, no
# $TRASH, no port reservation, no process naming it (the watchdog polls once a second).
gone() {
	local i p
	for i in $(seq 1 150); do
		test -e "/proc/$pm" || test -e "$trash" || break
		sleep 0.1
	done
	! test -e "/proc/$pm" || { echo "postmaster $pm still runs"; return 1; }
	! test -e "$trash" || { echo "$trash is still there"; ls -la "$trash"; return 1; }
	for p in $(pgrep -x postgres); do
		test "$(readlink "/proc/$p/cwd")" != "$data" || { echo "postgres $p in $data"; return 1; }
	done &&
	! grep -lx "$trash" /tmp/dbtap-test-port.*/owner 2>/dev/null &&
	if pgrep -f "$trash" >/dev/null; then
		echo "processes naming $trash:"; pgrep -af "$trash"; return 1
	fi
}

test_expect_success 'SIGKILL of the script while it runs: its cluster is stopped, its files removed' '
	standin "sleep 600 & echo \$! >\"$PWD/sleeper\"; ready; wait \$!" &&
	{ setsid bash standin.sh >standin.log 2>&1 & spid=$!; } &&
	started &&
	kill -KILL $spid &&
	gone &&
	kill "$(cat sleeper)"
'

test_expect_success 'a script that execs (no trap runs after): its cluster goes when it ends' '
	standin "ready; exec sleep 1" &&
	{ setsid bash standin.sh >standin.log 2>&1 & spid=$!; } &&
	started &&
	wait $spid &&
	gone
'

test_done
