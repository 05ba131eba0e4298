#!/bin/bash
test_description='dbtap count on a cluster: USDT and uprobes against pg_stat_* and psql'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pgcopy.sh # semaphores are read from the server: its own binary
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off" &&
	bin=$(readlink /proc/$PG_PID/exe)
'

# checkpoint__done has %rip-relative arguments, which libbpf 1.1 could not parse; counting
# reads none: its sites are uprobes with the semaphore as ref_ctr.
test_expect_success 'CHECKPOINT x3: checkpoint__start/done hits = pg_stat_bgwriter.checkpoints_req' '
	req0=$(pg_sql "select checkpoints_req from pg_stat_bgwriter") &&
	sema0=$(usdt_semaphore $PG_PID $bin checkpoint__done) &&
	trace_start c1.json count --pg="$PGDATA" -j --by type \
		usdt:postgresql:checkpoint__start usdt:postgresql:checkpoint__done &&
	test "$(usdt_semaphore $PG_PID $bin checkpoint__done)" = $((sema0 + 1)) &&
	for i in 1 2 3; do pg_sql "checkpoint" || return 1; done &&
	trace_stop &&
	test "$(usdt_semaphore $PG_PID $bin checkpoint__done)" = "$sema0" &&
	req1=$(pg_sql "select checkpoints_req from pg_stat_bgwriter") &&
	json_py "
n = $req1 - $req0
assert n == 3, n
hits = {p[\"name\"]: p[\"hits\"] for p in d[\"probes\"]}
assert hits == {\"checkpoint__start\": n, \"checkpoint__done\": n}, hits
for p in d[\"probes\"]:
    assert p[\"types\"] == [{\"type\": \"checkpointer\", \"hits\": n}], p
" <c1.json
'

test_expect_success 'transaction__start and pg_parse_query per backend = the statements psql sent' '
	{ echo "select pg_backend_pid();" && for i in $(seq 1 25); do echo "select $i;"; done; } >q.sql &&
	trace_start c2.json count --pg="$PGDATA" -j --by pid \
		usdt:postgresql:transaction__start uprobe:postgres:pg_parse_query &&
	psql -XAt -f q.sql >q.out &&
	trace_stop &&
	pid=$(sed -n 1p q.out) &&
	json_py "
pid = $pid
for p in d[\"probes\"]:
    mine = [x for x in p[\"processes\"] if x[\"pid\"] == pid]
    assert len(mine) == 1 and mine[0][\"type\"] == \"client backend\", p
    assert mine[0][\"user\"] == \"postgres\" and mine[0][\"database\"] == \"postgres\", p
    # 26 statements; the connection start-up adds one transaction, no parse
    want = 27 if p[\"name\"] == \"transaction__start\" else 26
    assert mine[0][\"hits\"] == want, (p[\"name\"], mine)
" <c2.json
'

test_expect_success 'usdt:postgresql:* attaches every probe the binary has' '
	n=$(readelf -n $bin | awk "/Provider: postgresql/ { getline; print \$2 }" | sort -u | wc -l) &&
	trace_start c3.json count --pg="$PGDATA" -j "usdt:postgresql:*" &&
	pg_sql "select 1" >/dev/null &&
	trace_stop &&
	json_py "
assert len(d[\"probes\"]) == $n, (len(d[\"probes\"]), $n)
h = {p[\"name\"]: p[\"hits\"] for p in d[\"probes\"]}
assert h[\"query__start\"] == h[\"query__done\"] == 1, h
assert h[\"transaction__start\"] == 2, h
" <c3.json
'

test_expect_success '--by database and --by user: one database and one role = the statements psql sent' '
	pg_sql "create database d2" &&
	pg_sql "create role r2 login" &&
	trace_start c4.json count --pg="$PGDATA" -j --by database usdt:postgresql:transaction__start &&
	psql -XAtq -d d2 -f q.sql >/dev/null &&
	trace_stop &&
	trace_start c5.json count --pg="$PGDATA" -j --by user -i 0.1 usdt:postgresql:transaction__start &&
	psql -XAtq -U r2 -d d2 -f q.sql >/dev/null &&
	trace_stop &&
	json_py "
p = d[\"probes\"][0]
d2 = [x for x in p[\"databases\"] if x[\"database\"] == \"d2\"]
# 26 statements and the start-up transaction, in d2 only
assert d2 == [{\"database\": \"d2\", \"hits\": 27}], p
" <c4.json &&
	json_py "
s = d[\"probes\"][0]
r2 = [x for x in s[\"users\"] if x[\"user\"] == \"r2\"]
assert r2 == [{\"user\": \"r2\", \"hits\": 27}], s
iv = [l for l in lines if l[\"report\"] == \"interval\"]
assert sum(x[\"hits\"] for l in iv for x in l[\"probes\"][0][\"users\"] if x[\"user\"] == \"r2\") == 27, iv
" <c5.json
'

test_expect_success 'a probe naming no binary and no target means the only cluster, as --pg does' '
	{ dbtap count usdt:postgresql:transaction__start -d 0.2 >o1 2>e1; echo $? >rc1; } &&
	{ dbtap count --pg usdt:postgresql:transaction__start -d 0.2 >o2 2>e2; echo $? >rc2; } &&
	test_cmp rc2 rc1 &&
	# the number of clusters other tests run here may change between the two runs
	grep "^tracing\|^error" e1 | sed "s/^error: [0-9]* PostgreSQL clusters/error: N PostgreSQL clusters/" >n1 &&
	grep "^tracing\|^error" e2 | sed "s/^error: [0-9]* PostgreSQL clusters/error: N PostgreSQL clusters/" >n2 &&
	test_cmp n2 n1
'

test_done
