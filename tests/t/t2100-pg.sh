#!/bin/bash
# t2100: dbtap pg finds clusters and names every process as pg_stat_activity does.
test_description='dbtap pg -j against the server'"'"'s own view (pg_stat_activity, SHOW, /proc)'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

pg_start a || test_bail "cannot start a PostgreSQL cluster"
pg_sql "create table t as select generate_series(1, 3000) i; analyze t" ||
	test_bail "cannot create a table"

# The cluster whose postmaster is $1, from `dbtap pg -j` on stdin.
cluster_py() {
	json_py "
import os, sys
cs = [c for c in lines if c[\"postmaster\"] == $1]
assert len(cs) == 1, [c[\"postmaster\"] for c in lines]
c = cs[0]
$2"
}

test_expect_success 'pg -j finds the test cluster: pid, port, data dir, socket, version' '
	dbtap pg -j >pg.json &&
	version=$(pg_sql "show server_version" | cut -d" " -f1) &&
	major=$(($(pg_sql "show server_version_num") / 10000)) &&
	started=$(pg_sql "select extract(epoch from pg_postmaster_start_time())::bigint") &&
	cluster_py $PG_PID "
assert c[\"port\"] == $PGPORT
assert os.path.samefile(c[\"datadir\"], \"$PGDATA\")
assert c[\"datadir\"] == os.path.realpath(\"$PGDATA\")
assert os.path.samefile(c[\"binary\"], \"$PG_BINDIR/postgres\")
assert c[\"major\"] == $major == int(open(\"$PGDATA/PG_VERSION\").read())
assert c[\"version\"] == \"$version\"
assert c[\"socket_dir\"] == \"$PGHOST\"
assert c[\"listen_addresses\"] == \"\"
assert c[\"state\"] == \"ready\"
assert abs(c[\"start_time\"] - $started) <= 2
assert c[\"cluster_name\"] == \"\"
assert c[\"processes\"][0] == dict(c[\"processes\"][0], pid=$PG_PID, type=\"postmaster\")
" <pg.json
'

# Sessions of every kind a plain cluster can have: a client, a replication connection
# (walsender) and a parallel query (its workers), all running while we look.
start_sessions() {
	psql -XAtq -c "select pg_sleep(20)" >/dev/null 2>&1 &
	psql "dbname=postgres replication=database" -XAtq -c "select pg_sleep(20)" \
		>/dev/null 2>&1 &
	psql -XAtq -c "set parallel_setup_cost = 0; set parallel_tuple_cost = 0;
		set min_parallel_table_scan_size = 0; set max_parallel_workers_per_gather = 2;
		select count(*) from t where pg_sleep(0.005) is not null" >/dev/null 2>&1 &
	for i in $(seq 1 50); do
		n=$(pg_sql "select count(distinct backend_type) from pg_stat_activity
			where backend_type in ('"'walsender'"', '"'parallel worker'"')
			   or query like '"'select pg_sleep(20)'"'")
		[ "$n" = 3 ] && return 0
		sleep 0.1
	done
	echo "sessions did not show up"
	return 1
}

stop_sessions() {
	pg_sql "select pg_terminate_backend(pid) from pg_stat_activity
		where backend_type in ('"'client backend'"', '"'walsender'"')
		  and pid <> pg_backend_pid()" >/dev/null
	wait
}

# Every pid pg_stat_activity shows before and after `dbtap pg` has the same type there.
same_types() {
	pg_sql "select pid, backend_type from pg_stat_activity where pid <> pg_backend_pid()" \
		>before &&
	dbtap pg -j --pg "$PGDATA" >types.json &&
	pg_sql "select pid, backend_type from pg_stat_activity where pid <> pg_backend_pid()" \
		>after &&
	python3 -c "
import json, sys
before = dict(l.strip().split(\"|\") for l in open(\"before\") if l.strip())
after = dict(l.strip().split(\"|\") for l in open(\"after\") if l.strip())
stable = {int(p): t for p, t in before.items() if after.get(p) == t}
c = json.loads(open(\"types.json\").read())
got = {p[\"pid\"]: p[\"type\"] for p in c[\"processes\"]}
want_kinds = set(sys.argv[1].split(\",\"))
assert want_kinds <= set(stable.values()), (want_kinds, stable)
for pid, t in stable.items():
    assert got.get(pid) == t, (pid, t, got.get(pid))
print(len(stable), \"pids agree\")
" "$1"
}

test_expect_success 'every pid in pg_stat_activity has the same backend_type in pg -j' '
	start_sessions &&
	same_types "client backend,walsender,parallel worker,checkpointer,background writer,walwriter,autovacuum launcher,logical replication launcher"
	rc=$?
	stop_sessions
	test $rc = 0
'

test_expect_success 'client backends carry user, database, host and activity' '
	psql -XAtq -c "select pg_sleep(20)" >/dev/null 2>&1 &
	for i in $(seq 1 50); do
		pid=$(pg_sql "select pid from pg_stat_activity where query = '"'select pg_sleep(20)'"'")
		[ -n "$pid" ] && break
		sleep 0.1
	done &&
	dbtap pg -j --pg "$PGDATA" >client.json
	rc=$?
	stop_sessions
	test $rc = 0 &&
	json_py "
p = [p for p in d[\"processes\"] if p[\"pid\"] == $pid][0]
assert p[\"type\"] == \"client backend\"
assert p[\"user\"] == \"postgres\" and p[\"database\"] == \"postgres\"
assert p[\"host\"] == \"[local]\"
assert p[\"activity\"] == \"SELECT\", p
" <client.json
'

test_expect_success 'a second cluster (with cluster_name) is listed separately' '
	a_pid=$PG_PID a_data=$PGDATA &&
	pg_start b "cluster_name = '"'dbtap test: b'"'" &&
	test "$PG_PID" != "$a_pid" &&
	dbtap pg -j >two.json &&
	cluster_py $a_pid "assert c[\"datadir\"] == os.path.realpath(\"$a_data\")" <two.json &&
	cluster_py $PG_PID "
assert c[\"datadir\"] == os.path.realpath(\"$PGDATA\")
assert c[\"port\"] == $PGPORT
assert c[\"cluster_name\"] == \"$(pg_sql "show cluster_name")\" == \"dbtap test: b\"
" <two.json &&
	# Each process is listed under the postmaster that is its parent (/proc says).
	python3 -c "
import json
for c in (json.loads(l) for l in open(\"two.json\")):
    if c[\"postmaster\"] not in ($a_pid, $PG_PID):
        continue
    for p in c[\"processes\"][1:]:
        ppid = int(open(\"/proc/%d/stat\" % p[\"pid\"]).read().rsplit(\")\", 1)[1].split()[1])
        assert ppid == c[\"postmaster\"], (p, ppid)
"
'

test_expect_success 'with a cluster_name the types still match pg_stat_activity' '
	pg_sql "create table t as select generate_series(1, 3000) i; analyze t" &&
	start_sessions &&
	same_types "client backend,walsender,parallel worker,checkpointer,walwriter"
	rc=$?
	stop_sessions
	test $rc = 0
'

test_expect_success '--pg alone refuses to guess between clusters and lists them' '
	test_expect_code 2 dbtap pg --pg 2>err &&
	test_grep "will not guess" err &&
	test_grep "^hint: " err &&
	test_grep "$(realpath "$a_data")" err &&
	test_grep "$(realpath "$PGDATA")" err &&
	test_expect_code 2 dbtap doctor --pg 2>err &&
	test_grep "$(realpath "$a_data")" err
'

test_expect_success '--pg takes a data directory, a port or a postmaster pid' '
	pg_use a &&
	for spec in "$PGDATA" "$PGDATA/" "$PGPORT" "$PG_PID"; do
		dbtap pg -j --pg "$spec" >one.json &&
		json_py "assert len(lines) == 1 and d[\"postmaster\"] == $PG_PID" <one.json ||
		return 1
		dbtap pg -j --pg="$spec" >one.json &&
		json_py "assert len(lines) == 1 and d[\"postmaster\"] == $PG_PID" <one.json ||
		return 1
	done &&
	(cd "$PGDATA/.." && dbtap pg -j --pg data) >one.json &&
	json_py "assert d[\"postmaster\"] == $PG_PID" <one.json
'

test_expect_success '--pg with a backend pid says which postmaster to use' '
	pid=$(pg_sql "select pid from pg_stat_activity where backend_type = '"'walwriter'"'") &&
	test_expect_code 2 dbtap pg --pg "$pid" 2>err &&
	test_grep "pid $pid is a walwriter" err &&
	test_grep "^hint: use --pg $PG_PID" err
'

test_expect_success 'as the server'"'"'s user it is found; as another user, a warning' '
	dbtap_as postgres pg -j >as_pg.json &&
	cluster_py $PG_PID "assert c[\"port\"] == $PGPORT" <as_pg.json &&
	dbtap_as nobody pg -j >as_nobody.json 2>err &&
	test_grep "^warning: .*could not be inspected" err &&
	test_grep "^hint: run as root" err &&
	json_py "assert all(c[\"postmaster\"] != $PG_PID for c in lines)" <as_nobody.json
'

test_done
