# tests/lib/pg.sh: a throwaway PostgreSQL cluster per test file, sourced after test-lib.sh.
#
#	pg_start [NAME [CONF_LINE...]]  initdb (as postgres, trust) into $TRASH/NAME (default
#	                                "pg") and start it: unix socket in $TRASH/NAME/sock only,
#	                                a free port, each CONF_LINE appended to postgresql.conf.
#	                                Exports PGHOST PGPORT PGDATA PGUSER=postgres
#	                                PGDATABASE=postgres PG_PID (postmaster pid), PG_BINDIR.
#	pg_use NAME                     exports those variables for cluster NAME again
#	pg_sql 'SQL'                    psql -XAtq, stops at the first error
#	pg_bench ARGS...                pgbench against the current cluster
#	pg_stop [NAME]                  stops it (default: the current one)
#
# Every cluster started is stopped when the test file exits, failures and signals
# included; its files go with $TRASH.

if [ -z "$PG_BINDIR" ]; then
	# The newest installed major version that has a server.
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/postgres" ]; then
			PG_BINDIR=$d
			break
		fi
	done
	if [ -z "$PG_BINDIR" ] && command -v pg_config >/dev/null; then
		PG_BINDIR=$(pg_config --bindir)
	fi
fi
[ -x "$PG_BINDIR/postgres" ] || test_skip_all "no PostgreSQL server found (install postgresql)"
export PG_BINDIR

# psql and pgbench from their own directory, the newest version's: Debian's /usr/bin
# ones are links to pg_wrapper, a Perl script that picks the same binary after tens of
# milliseconds, and the suite runs psql thousands of times. (PG_BINDIR may be a copy
# holding the server alone: pgcopy.sh.)
for pg_client_dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
	if [ -x "$pg_client_dir/psql" ] && [ -x "$pg_client_dir/pgbench" ]; then
		PATH="$pg_client_dir:$PATH"
		break
	fi
done

pg_clusters=()

# Runs a command as the postgres user (the server refuses to run as root).
pg_as_postgres() {
	if [ "$(id -un)" = postgres ]; then
		"$@"
	else
		runuser -u postgres -- "$@"
	fi
}

# A port no other cluster here uses: its socket name is private to our directory, but
# `dbtap pg` and --pg PORT must tell clusters apart. The reservation directory makes
# concurrent test files pick different ports.
pg_pick_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + RANDOM % 30000))
		if ss -Hlx 2>/dev/null | grep -q "\.s\.PGSQL\.$p\b"; then
			continue
		fi
		if ss -Hltn 2>/dev/null | grep -q ":$p\b"; then
			continue
		fi
		if mkdir "/tmp/dbtap-test-port.$p" 2>/dev/null; then
			echo "$TRASH" >"/tmp/dbtap-test-port.$p/owner"
			echo "$p"
			return 0
		fi
	done
	return 1
}

pg_use() {
	local name=${1:-pg}
	[ -f "$TRASH/$name/env" ] || { echo "pg_use: no cluster $name" >&2; return 1; }
	. "$TRASH/$name/env"
}

# initdb takes seconds, copying its result a fraction of one: each server version gets
# one initdb per machine and user, in a directory made whole before it is renamed into
# place (test files run at the same time: the first rename wins, the others copy it).
pg_initdb() {
	local data=$1 tpl tmp
	tpl="/tmp/dbtap-initdb.$(id -u).$("$PG_BINDIR/postgres" -V | tr -c 'A-Za-z0-9.' _)"
	if [ ! -f "$tpl/done" ]; then
		tmp=$(mktemp -d /tmp/dbtap-initdb.XXXXXX) || return 1
		chown postgres: "$tmp" || return 1
		pg_as_postgres "$PG_BINDIR/initdb" -D "$tmp/data" -A trust -U postgres -N \
			-E UTF8 --locale=C >"$tmp/initdb.log" 2>&1 || {
			echo "pg_start: initdb failed:" >&2
			cat "$tmp/initdb.log" >&2
			rm -rf "$tmp"
			return 1
		}
		touch "$tmp/done"
		mv -T "$tmp" "$tpl" 2>/dev/null || rm -rf "$tmp"
	fi
	cp -a "$tpl/data" "$data"
}

pg_start() {
	local name=${1:-pg}
	[ $# -gt 0 ] && shift
	local dir="$TRASH/$name"
	local port

	mkdir -p "$dir/sock" || return 1
	chown -R postgres: "$dir" || return 1
	if ! pg_as_postgres test -w "$dir/sock"; then
		# The checkout is not reachable by postgres (say, under a 0700 home):
		# the cluster lives in /tmp, $TRASH/NAME points at it.
		rm -rf "$dir"
		dir=$(mktemp -d /tmp/dbtap-test-pg.XXXXXX) || return 1
		mkdir "$dir/sock" && chown -R postgres: "$dir" && chmod 755 "$dir" &&
			ln -s "$dir" "$TRASH/$name" || return 1
		test_atexit "rm -rf '$dir'"
	fi
	port=$(pg_pick_port) || { echo "pg_start: no free port" >&2; return 1; }
	pg_clusters+=("$name")
	test_atexit "pg_cleanup $name $port"

	pg_initdb "$dir/data" || return 1
	{
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir/sock'"
		echo "fsync = off"
		echo "shared_buffers = 32MB"
		echo "max_connections = 50"
		local line
		for line in "$@"; do
			echo "$line"
		done
	} >>"$dir/data/postgresql.conf"
	pg_as_postgres "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		start >"$dir/pg_ctl.log" 2>&1 || {
		echo "pg_start: server did not start:" >&2
		cat "$dir/pg_ctl.log" "$dir/server.log" >&2
		return 1
	}
	cat >"$dir/env" <<-ENV
	export PGHOST='$dir/sock' PGPORT=$port PGDATA='$dir/data' PGUSER=postgres
	export PGDATABASE=postgres PG_PID=$(head -n1 "$dir/data/postmaster.pid")
	ENV
	pg_use "$name"
}

pg_sql() {
	psql -XAtq -v ON_ERROR_STOP=1 -c "$1"
}

pg_bench() {
	pgbench "$@"
}

# Stops cluster NAME (default: the one PGDATA points at).
pg_stop() {
	local dir
	if [ -n "$1" ]; then
		dir="$TRASH/$1/data"
	else
		dir=$PGDATA
	fi
	pg_as_postgres "$PG_BINDIR/pg_ctl" -D "$dir" -m fast -w -t 30 stop >/dev/null
}

# At exit: stop NAME hard (immediate, then SIGKILL of the postmaster), free its port.
pg_cleanup() {
	local name=$1 port=$2
	local data="$TRASH/$name/data" pid
	if [ -f "$data/postmaster.pid" ]; then
		pid=$(head -n1 "$data/postmaster.pid")
		pg_as_postgres "$PG_BINDIR/pg_ctl" -D "$data" -m immediate -w -t 10 stop \
			>/dev/null 2>&1
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
		   [ "$(readlink /proc/$pid/cwd 2>/dev/null)" = "$(realpath "$data")" ]; then
			kill -9 "$pid"
		fi
	fi
	rm -rf "/tmp/dbtap-test-port.$port"
}

# pg_server_headers: sets server_inc to the running server's major version's headers,
# from Debian's archive (postgresql-server-dev-MAJOR), unpacked into a cache under
# build/ shared by the tests that compile against them (not installed system-wide).
# Made whole in a directory of its own, then renamed into place: test files run at
# the same time (the first rename wins, the others drop theirs). Skips the whole test
# file when the archive cannot be reached.
pg_server_headers() {
	local major cache tmp
	major=$("$PG_BINDIR"/postgres --version | sed -n 's/.* \([0-9][0-9]*\)\.[0-9]*.*/\1/p')
	cache="$TEST_ROOT/build/cache/server-dev-$major"
	if [ ! -f "$cache/ok" ]; then
		mkdir -p "$TEST_ROOT/build/cache" &&
		tmp=$(mktemp -d "$TEST_ROOT/build/cache/server-dev-$major.XXXXXX") && chmod 755 "$tmp" &&
		(cd "$tmp" && apt-get download "postgresql-server-dev-$major" >download.log 2>&1 &&
		 dpkg-deb -x postgresql-server-dev-"$major"_*.deb root && touch ok) || {
			rm -rf "$tmp"
			test_skip_all "cannot download postgresql-server-dev-$major from the apt archive"
		}
		mv -T "$tmp" "$cache" 2>/dev/null ||
		if [ -f "$cache/ok" ]; then
			rm -rf "$tmp"
		else
			# one without ok: left half made by an interrupted run
			rm -rf "$cache" && mv -T "$tmp" "$cache"
		fi
	fi
	server_inc="$cache/root/usr/include/postgresql/$major/server"
}
