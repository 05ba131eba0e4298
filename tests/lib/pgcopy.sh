# tests/lib/pgcopy.sh: the cluster runs from a private copy of the server binary.
# Source it before pg.sh; it sets PG_BINDIR to the copy.
#
# Uprobes belong to a file: other tracers on this machine (other copies of dbtap,
# other test files) attach to the system's binary, and through it to every process
# running it, raising its USDT semaphores and patching its probe sites. A test that
# reads those from the server's memory runs the server from a copy no one else knows.
# The copy's lib and share directories are links to the system's, where PostgreSQL
# finds them relative to its binary.

PGCOPY_SYS_BINDIR=
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
	[ -x "$d/postgres" ] && PGCOPY_SYS_BINDIR=$d && break
done
[ -n "$PGCOPY_SYS_BINDIR" ] || test_skip_all "no PostgreSQL server found (install postgresql)"
PGCOPY_TREE=$(mktemp -d /tmp/dbtap-pgcopy.XXXXXX) || exit 1
test_atexit "rm -rf $PGCOPY_TREE"
pgcopy_major=$(basename "$(dirname "$PGCOPY_SYS_BINDIR")")
mkdir -p "$PGCOPY_TREE/usr/lib/postgresql/$pgcopy_major/bin" "$PGCOPY_TREE/usr/share/postgresql" &&
	cp "$PGCOPY_SYS_BINDIR"/postgres "$PGCOPY_SYS_BINDIR"/initdb "$PGCOPY_SYS_BINDIR"/pg_ctl \
		"$PGCOPY_TREE/usr/lib/postgresql/$pgcopy_major/bin/" &&
	ln -s "$(dirname "$PGCOPY_SYS_BINDIR")/lib" "$PGCOPY_TREE/usr/lib/postgresql/$pgcopy_major/lib" &&
	ln -s "/usr/share/postgresql/$pgcopy_major" "$PGCOPY_TREE/usr/share/postgresql/$pgcopy_major" &&
	chmod -R a+rX "$PGCOPY_TREE" || exit 1
export PG_BINDIR="$PGCOPY_TREE/usr/lib/postgresql/$pgcopy_major/bin"
