# tests/lib/standalone.sh: throwaway clusters (tests/lib/pg.sh) outside the TAP harness,
# for `make demo` and the scripts in bench/. Sourced by bash scripts; then:
#
#	standalone_init NAME WHY   refuses to run without root (WHY: what needs it) or
#	                           without ./dbtap, makes $TRASH (/tmp/dbtap-NAME.XXXXXX),
#	                           and stops every cluster and removes $TRASH on exit,
#	                           Ctrl-C and SIGTERM. Sets ROOT and DBTAP.
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
