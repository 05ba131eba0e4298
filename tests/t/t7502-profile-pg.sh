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

# pgbench's clients (not its first connection, which only reads the scale) once both
# run the -S statement: their pids, one a line, in FILE.
bench_clients() {
	local i n
	for i in $(seq 1 600); do
		pg_sql "select pid from pg_stat_activity where application_name = 'pgbench'
			and query like '%pgbench_accounts%' order by pid" >"$1" &&
		n=$(wc -l <"$1") &&
		test "$n" = 2 &&
		test "$(pg_sql "select count(*) from pg_stat_activity
			where application_name = 'pgbench'")" = 2 && return 0
		sleep 0.05
	done
	echo "pgbench's two clients never ran their statement:"
	cat "$1"
	return 1
}

# window_samples N: waits until the window's profile has counted N samples of client
# backends in its interval reports (20 s at most: a loaded machine gives them little CPU).
window_samples() {
	local i
	for i in $(seq 1 400); do
		python3 -c "
import json, sys
n = 0
for l in open(\"window.json\"):
    try:
        d = json.loads(l)
    except ValueError:
        continue  # a line being written
    if d.get(\"report\") == \"interval\":
        n += sum(p[\"samples\"] for p in d[\"processes\"] if p[\"type\"] == \"client backend\")
sys.exit(0 if n >= $1 else 1)" 2>/dev/null && return 0
		kill -0 $win || { cat window.err; return 1; }
		sleep 0.05
	done
	return 0
}

# The share that reaches PostgresMain is the one of client backends while they run
# statements: a backend's fork before PostgresMain (the postmaster's code in the
# child) and its exit (the kernel freeing its memory, no user stack left) are not
# statements, and with pgbench -T their share of the samples grows as load shrinks the
# statements run. So that share is taken from a second profile that attaches once both
# clients run their statement and ends while pgbench still runs, once it has 400
# samples of them (at 999 Hz: under a second on a quiet machine, seconds on a loaded
# one, where a fixed 2 s gave 100 and a few broken chains were a large share of them);
# the first, attached before pgbench starts, checks that the backends forked later are
# followed and labelled.
test_expect_success 'pgbench started after dbtap: >= 95 % of client backend samples reach PostgresMain' '
	trace_start p1.json profile --pg "$PGDATA" -F 199 -o p1.folded -j --by pid &&
	bg_run bench.out pg_bench -c 2 -j 2 -T 120 -S -n &&
	bench=$BG_PID &&
	test_when_finished "kill $bench 2>/dev/null; wait $bench; :" &&
	bench_clients pids.txt &&
	{ "$DBTAP" profile --pg "$PGDATA" -F 999 -i 0.5 -o window.folded -j --by pid \
		>window.json 2>window.err </dev/null & } &&
	win=$! &&
	test_when_finished "kill -KILL $win 2>/dev/null; :" &&
	window_samples 400 &&
	kill -INT $win &&
	{ wait $win || { cat window.err; false; }; } &&
	# the window ended before pgbench and its two clients
	kill -0 $bench &&
	bench_clients after.txt &&
	test_cmp pids.txt after.txt &&
	{ trace_stop || { cat p1.json.err; false; }; } &&
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
	json_py "
assert d[\"lost\"][\"total\"] == 0, d[\"lost\"]
" <window.json &&
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
" <window.folded
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
