#!/bin/bash
test_description='dbtap wait: a row lock: the blocked backend charged, the holder not'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

test_expect_success 'set up a cluster and a table' '
	pg_start pg "autovacuum = off" &&
	pg_sql "create table t (id int primary key, v int); insert into t values (1, 0)"
'

test_expect_success 'row lock held 1.5 s by A: B has Lock:transactionid for the time it was blocked' '
	trace_start w1.json wait --pg="$PGDATA" -j --by pid &&
	cat >a.sql <<-\EOS &&
	select pg_backend_pid();
	begin;
	update t set v = v + 1 where id = 1;
	\! touch locked
	\! sleep 1.5
	commit;
	EOS
	cat >b.sql <<-\EOS &&
	select pg_backend_pid();
	\timing on
	update t set v = v + 10 where id = 1;
	EOS
	{ psql -XAt -f a.sql >a.out 2>&1 & apsql=$!; } &&
	for i in $(seq 1 100); do test -f locked && break; sleep 0.02; done &&
	test -f locked &&
	psql -XAt -f b.sql >b.out 2>&1 &&
	wait $apsql &&
	trace_stop &&
	test "$(pg_sql "select v from t where id = 1")" = 11 &&
	apid=$(sed -n 1p a.out) && bpid=$(sed -n 1p b.out) &&
	blocked_ms=$(sed -n "s/^Time: \([0-9.]*\) ms.*/\1/p" b.out) &&
	test -n "$blocked_ms" &&
	json_py "
a, b, blocked = $apid, $bpid, $blocked_ms / 1000.0
waits = {g[\"pid\"]: g[\"waits\"] for g in d[\"processes\"]}
def rows(pid, t, e):
    return [r for r in waits[pid] if r[\"wait_event_type\"] == t and r[\"wait_event\"] == e]
bl = rows(b, \"Lock\", \"transactionid\")
assert len(bl) == 1, waits[b]
# the statement as the client timed it: the lock wait plus a little execution
assert abs(bl[0][\"wait_s\"] - blocked) <= 0.05 * blocked, (bl, blocked)
assert blocked > 1.0, blocked
assert bl[0][\"count\"] >= 1, bl
# the holder waits for its client inside the transaction, never for the lock
assert not [r for r in waits[a] if r[\"wait_event_type\"] == \"Lock\"], waits[a]
held = rows(a, \"Client\", \"ClientRead\")
assert held and held[0][\"wait_s\"] >= 1.5, held
" <w1.json
'

test_expect_success 'by statement: the blocked update carries the lock wait' '
	rm -f locked &&
	trace_start w2.json wait --pg="$PGDATA" -j --by query &&
	{ psql -XAt -f a.sql >a.out 2>&1 & apsql=$!; } &&
	for i in $(seq 1 100); do test -f locked && break; sleep 0.02; done &&
	psql -XAt -f b.sql >b.out 2>&1 &&
	wait $apsql &&
	trace_stop &&
	json_py "
bl = [dict(w, query=g[\"query\"]) for g in d[\"statements\"] for w in g[\"waits\"]
      if w[\"wait_event\"] == \"transactionid\"]
assert len(bl) == 1 and bl[0][\"query\"] == \"update t set v = v + \$1 where id = \$2;\", bl
" <w2.json
'

test_done
