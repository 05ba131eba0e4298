#!/bin/bash
test_description='dbtap bench pgbench: pgbench TPS untraced and with tps / watch xid attached'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

test_expect_success 'every tracer row is measured by pgbench, or says why not' '
	dbtap bench pgbench --pg="$PGDATA" -d 1 -c 2 -j >pgb.json 2>pgb.err &&
	json_py "
rows, s = lines[:-1], lines[-1]
assert s[\"report\"] == \"summary\" and s[\"end\"] == \"duration\" and s[\"clients\"] == 2, s
assert [r[\"tracer\"] for r in rows] == [\"untraced\", \"tps\", \"watch-xid-trap\",
                                          \"watch-xid-poll\"], rows
for r in rows:
    assert r[\"report\"] == \"row\", r
    if not r[\"available\"]:
        assert set(r) == {\"report\", \"time_s\", \"tracer\", \"available\", \"reason\"} and r[\"reason\"], r
        continue
    assert set(r) == {\"report\", \"time_s\", \"tracer\", \"available\", \"samples\", \"tps\", \"spread_pct\",
                      \"transactions\", \"loss_pct\"}, r
    assert r[\"samples\"] == 1 and r[\"tps\"] > 0 and r[\"transactions\"] > 0, r
    assert (r[\"loss_pct\"] is None) == (r[\"tracer\"] == \"untraced\"), r
assert rows[0][\"available\"], rows
" <pgb.json
'

# --pg DATADIR as two words, as every command takes it
test_expect_success 'the transactions are the ones the cluster committed (pg_stat_database)' '
	before=$(pg_sql "select xact_commit from pg_stat_database where datname = current_database()") &&
	dbtap bench pgbench --pg "$PGDATA" -d 1 -c 2 -j >pgb2.json 2>pgb2.err &&
	pg_sql "select pg_stat_force_next_flush()" >/dev/null &&
	sleep 1 &&
	after=$(pg_sql "select xact_commit from pg_stat_database where datname = current_database()") &&
	json_py "
total = sum(r[\"transactions\"] for r in lines if r[\"report\"] == \"row\" and r[\"available\"])
# pgbench counts each script run; the cluster also commits the few statements of
# psql and of pgbench sessions themselves
grew = $after - $before
assert total <= grew <= total + 50, (total, grew)
" <pgb2.json
'

test_expect_success 'Ctrl-C mid run: pgbench and the attached tracer are stopped and reaped' '
	"$DBTAP" bench pgbench --pg="$PGDATA" -d 1 -c 2 -j >int.json 2>int.err &
	pid=$! &&
	sleep 1.6 &&
	kids=$(pgrep -P $pid | tr "\n" " ") &&
	test -n "$kids" &&
	kill -INT $pid &&
	wait $pid &&
	for k in $kids; do
		test_must_fail kill -0 $k 2>/dev/null || return 1
	done &&
	test_must_fail pgrep -P $pid &&
	json_py "assert lines[0][\"tracer\"] == \"untraced\" and lines[0][\"available\"], lines" <int.json
'

test_expect_success 'no cluster: an error naming the target, with a hint' '
	test_expect_code 2 dbtap bench --pg "$PGDATA" uprobe-nop 2>err0 &&
	test_grep "^error: --pg is for '"'dbtap bench pgbench'"'" err0 && test_grep "^hint: dbtap bench pgbench --pg" err0 &&
	test_must_fail dbtap bench pgbench --pg=/nonexistent/data 2>err &&
	test_grep "/nonexistent/data" err &&
	test_grep "^hint: " err
'

test_done
