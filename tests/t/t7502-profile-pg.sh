#!/bin/bash
test_description='dbtap profile --pg: backend stacks under pgbench reach PostgresMain, later backends included'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

test_expect_success 'setup: a cluster with pgbench tables' '
	pg_start &&
	pg_bench -i -q -s 1 >init.out 2>&1 &&
	# the server is stripped: names can only come from .dynsym
	! readelf -S "$PG_BINDIR/postgres" | grep -q " \.symtab " &&
	readelf -S "$PG_BINDIR/postgres" | grep -q " \.dynsym "
'

test_expect_success 'pgbench started after dbtap: >= 95 % of client backend samples reach PostgresMain' '
	trace_start p1.json profile --pg "$PGDATA" -F 199 -o p1.folded -j --by pid &&
	bg_run bench.out pg_bench -c 2 -j 2 -T 4 -S -n &&
	bench=$BG_PID &&
	sleep 2 &&
	pg_sql "select pid from pg_stat_activity where application_name = '"'"'pgbench'"'"'" >pids.txt &&
	wait $bench &&
	trace_stop &&
	test_grep "number of transactions actually processed" bench.out &&
	test $(wc -l <pids.txt) = 2 &&
	json_py "
pids = [int(l) for l in open(\"pids.txt\")]
procs = {p[\"pid\"]: p for p in d[\"processes\"]}
for pid in pids:
    # forked after dbtap attached, by a cluster it only knew through the postmaster
    assert procs[pid][\"type\"] == \"client backend\", procs.get(pid)
    assert procs[pid][\"samples\"] > 20, procs[pid]
    f = {x[\"name\"]: x for x in procs[pid][\"functions\"]}
    assert f[\"PostgresMain\"][\"kind\"] == \"user\", f.get(\"PostgresMain\")
assert d[\"lost\"][\"total\"] == 0, d[\"lost\"]
" <p1.json &&
	folded_py "
cb = [(f, c) for f, c in stacks if f[0].startswith(\"client backend \")]
total = sum(c for _, c in cb)
reach = sum(c for f, c in cb if \"PostgresMain\" in f)
print(\"client backend samples\", total, \"reaching PostgresMain\", reach)
assert total > 50, total
assert reach >= 0.95 * total, (reach, total)
# user frames under PostgresMain are the server'"'"'s: main, then PostmasterMain
for f, c in cb:
    if \"PostgresMain\" in f:
        assert \"main\" in f[:f.index(\"PostgresMain\")], f[:6]
" <p1.folded
'

test_expect_success '--by type (the default with --pg): the postmaster and client backends by name' '
	trace_start p2.json profile --pg "$PGDATA" -F 199 -j &&
	pg_bench -c 1 -T 2 -S -n >bench2.out 2>&1 &&
	trace_stop &&
	json_py "
types = {t[\"type\"]: t for t in d[\"types\"]}
assert \"client backend\" in types, list(types)
assert all(p[\"type\"] != \"exited\" for p in d[\"processes\"] if p[\"samples\"] > 5), d[\"processes\"]
assert sum(t[\"samples\"] for t in d[\"types\"]) == d[\"samples\"], d
" <p2.json
'

test_done
