# tests/lib/standalone.sh: throwaway clusters (tests/lib/pg.sh) outside the TAP harness,
# for `make demo` and the scripts in bench/. Sourced by bash scripts; then:
#
#	standalone_init NAME WHY   refuses to run without root (WHY: what needs it) or
#	                           without ./dbtap, makes $TRASH (/tmp/dbtap-NAME.XXXXXX),
#	                           and stops every cluster and removes $TRASH on exit,
#	                           Ctrl-C and SIGTERM. Sets ROOT and DBTAP.
#	                           A watchdog does the same once the script's pid is gone
#	                           when no trap could: SIGKILL, or a script that exec'd.
#	test_atexit CMD            runs CMD at exit, before what was registered earlier
#	standalone_cluster [init]  starts cluster "bench" (autovacuum off) from a private copy
#	                           of the server binary, with init pgbench's tables (scale 4)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DBTAP="$ROOT/dbtap"
export DBTAP

standalone_atexit=()
test_atexit() { standalone_atexit=("$1" "${standalone_atexit[@]}"); }
test_skip_all() { echo "error: $*" >&2; exit 1; }

standalone_cleanup() {
	trap - EXIT INT TERM
	for c in "${standalone_atexit[@]}"; do
		eval "$c" >/dev/null 2>&1
	done
	[ -n "$TRASH" ] && rm -rf "$TRASH"
	# all done here: the watchdog is not needed (its tail ends with this process)
	[ -n "$standalone_watchdog_pid" ] && kill "$standalone_watchdog_pid" 2>/dev/null
}

standalone_init() {
	if [ "$(id -u)" != 0 ]; then
		echo "error: $1 needs root ($2)" >&2
		echo "hint: run it as root, e.g. with sudo" >&2
		exit 1
	fi
	if [ ! -x "$DBTAP" ]; then
		echo "error: $DBTAP is not built" >&2
		echo "hint: run 'make' in $ROOT" >&2
		exit 1
	fi
	TRASH=$(mktemp -d "/tmp/dbtap-$1.XXXXXX") || exit 1
	chmod 755 "$TRASH" # the postgres user works in it
	trap standalone_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	. "$ROOT/tests/lib/pg.sh"
	standalone_watchdog
}

# SIGKILL runs no trap, and a script that execs (bench/profile.sh hands over to python)
# has dropped them: clusters would outlive it. A watchdog in a session of its own (a
# kill of the script's process group misses it; no terminal, no pipe of the script's
# held open) waits for this pid to go, then stops every cluster under $TRASH (immediate,
# then SIGKILL of the postmaster) and removes $TRASH, the /tmp directories its links
# point at and its port reservations. After a normal exit the trap has done all that.
standalone_watchdog() {
	# what it needs in its environment, not its arguments: pgrep -f $TRASH finds none of
	# it; started from a subshell, so that it is no child of the script (a bare `wait`
	# there would wait for it)
	standalone_watchdog_pid=$(
	STANDALONE_OWNER=$$ STANDALONE_TRASH=$TRASH STANDALONE_BINDIR=$PG_BINDIR setsid bash -c '
		owner=$STANDALONE_OWNER trash=$STANDALONE_TRASH bindir=$STANDALONE_BINDIR
		tail --pid="$owner" -f /dev/null
		[ -d "$trash" ] || exit 0
		for pidfile in "$trash"/*/data/postmaster.pid; do
			[ -f "$pidfile" ] || continue
			data=$(realpath "${pidfile%/postmaster.pid}")
			pid=$(head -n1 "$pidfile")
			runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m immediate -w -t 10 stop
			if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
			   [ "$(readlink "/proc/$pid/cwd")" = "$data" ]; then
				kill -9 "$pid"
			fi
		done
		for link in "$trash"/*; do
			[ -L "$link" ] && rm -rf "$(readlink "$link")"
		done
		for owner_file in /tmp/dbtap-test-port.*/owner; do
			[ "$(cat "$owner_file" 2>/dev/null)" = "$trash" ] && rm -rf "${owner_file%/owner}"
		done
		rm -rf "$trash"
	' </dev/null >/dev/null 2>&1 &
	echo $!
	)
}

# Uprobes belong to the binary's file: from a private copy, other tracers on this machine
# do not trap in this server, and other clusters do not run into these probes.
standalone_cluster() {
	. "$ROOT/tests/lib/pgcopy.sh"
	pg_start bench "autovacuum = off" || exit 1
	if [ "$1" = init ]; then
		pgbench -i -q -s 4 >"$TRASH/init.log" 2>&1 || { cat "$TRASH/init.log"; exit 1; }
	fi
}
