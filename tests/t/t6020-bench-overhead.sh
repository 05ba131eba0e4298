#!/bin/bash
test_description='bench/lib/abrun.py: interleaved untraced/traced pgbench runs, their transactions and a row per command'
. "$(dirname "$0")"/../lib/test-lib.sh
# Uprobes belong to the binary's file: a private copy keeps other clusters' transactions
# out of the program run counts, and other tracers' probes out of this server.
. "$TEST_LIB"/pgcopy.sh
. "$TEST_LIB"/pg.sh

ABRUN="$TEST_ROOT/bench/lib/abrun.py"

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

# Figures are not asserted (timings never are): the counts behind them are. Windows of
# 0.4 s after 0.2 s: each pgbench run is one second (-T rounds up window + 0.3 s).
test_expect_success 'two pairs of two commands: every run counted from pgbench, a row per command' '
	before=$(pg_sql "select xact_commit from pg_stat_database where datname = current_database()") &&
	python3 "$ABRUN" --pg-pid "$PG_PID" --pgdata "$PGDATA" --pairs 2 --secs 0.4 --warm 0.2 \
		--clients 2 --threads 1 --commands tps,watch-xid-poll --diag tps --json ab.json >ab.out 2>ab.err &&
	pg_sql "select pg_stat_force_next_flush()" >/dev/null &&
	sleep 1 &&
	after=$(pg_sql "select xact_commit from pg_stat_database where datname = current_database()") &&
	json_py "
cfg = lines[0]
assert cfg[\"report\"] == \"config\" and cfg[\"pairs\"] == 2 and cfg[\"clients\"] == 2, cfg
runs = [r for r in lines if r[\"report\"] in (\"run\", \"diag\")]
# pair 1 untraced first, pair 2 traced first; the commands take turns
order = [(r[\"command\"], r[\"pair\"], r[\"traced\"]) for r in runs if r[\"report\"] == \"run\"]
assert order == [(\"tps\", 1, False), (\"tps\", 1, True), (\"watch-xid-poll\", 1, False),
                 (\"watch-xid-poll\", 1, True), (\"tps\", 2, True), (\"tps\", 2, False),
                 (\"watch-xid-poll\", 2, True), (\"watch-xid-poll\", 2, False)], order
for r in runs:
    # the harness counts pgbench own log: all of it, and the window is a part
    assert r[\"logged_transactions\"] == r[\"pgbench_transactions\"] > 0, r
    assert 0 < r[\"transactions\"] < r[\"pgbench_transactions\"], r
    assert r[\"cpu_ns_per_tx\"] > 0 and r[\"processes_gone\"] == 0 and r[\"attempts\"] <= 3, r
# (with those of runs made again: a window that was not all steady load)
total = sum(r[\"pgbench_transactions\"] + r[\"discarded_transactions\"] for r in runs)
grew = $after - $before
# the cluster also commits the statements of psql and of pgbench sessions themselves
assert total <= grew <= total + 100, (total, grew)
# the transaction probes: a start and a commit per transaction in the window
d = [r for r in runs if r[\"report\"] == \"diag\" and r[\"command\"] == \"tps\"][0]
# (tx_multi through a multi-uprobe link, or tx_uprobe where the kernel has none). The
# transactions between the readings of the run counts are known within the time each
# reading took (on a loaded machine a preempted one takes tens of ms) and one per
# client at each end: two runs each, within those bounds, which tell two from one
# (a probe missing) and from three
probe_runs = sum(x[\"runs\"] for x in d[\"programs\"] if x[\"name\"] in (\"tx_multi\", \"tx_uprobe\"))
lo = d[\"programs_transactions_min\"] - cfg[\"clients\"]
hi = d[\"programs_transactions_max\"] + cfg[\"clients\"]
assert 2 * lo <= probe_runs <= 2 * hi, (probe_runs, lo, hi, d[\"programs\"])
assert hi < 2 * lo and 3 * lo > 2 * hi, (lo, hi)
assert [r[\"command\"] for r in runs if r[\"report\"] == \"diag\"] == [\"tps\"], runs
rows = [r for r in lines if r[\"report\"] == \"row\"]
assert [r[\"command\"] for r in rows] == [\"tps\", \"watch-xid-poll\"], rows
for r in rows:
    assert r[\"pairs\"] == 2 and r[\"tps_ratio_min\"] <= r[\"tps_ratio\"] <= r[\"tps_ratio_max\"], r
# poll runs nothing in the server: its floor is from its traced runs own CPU figures
# (the tracer, the server, pgbench in the window), the lowest pair and the median of two
traced = [r for r in runs if r[\"report\"] == \"run\" and r[\"command\"] == \"watch-xid-poll\" and r[\"traced\"]]
floors = sorted(1 - r[\"tracer_cpu_ns\"] / (r[\"server_cpu_ns\"] + r[\"pgbench_cpu_ns\"] + r[\"tracer_cpu_ns\"])
                for r in traced)
poll = rows[1]
assert len(floors) == 2 and 0 < floors[0] <= floors[1] <= 1, floors
assert poll[\"cpu_floor_premise\"] and poll[\"cpu_floor_min\"] == floors[0], (poll, floors)
assert abs(poll[\"cpu_floor_ratio\"] - (floors[0] + floors[1]) / 2) < 1e-12, (poll, floors)
assert poll[\"goal\"] == (\"met\" if floors[0] >= 0.995 else \"missed\"), poll
assert \"cpu_floor_ratio\" not in rows[0], rows[0]
" <ab.json &&
	grep -q "^tps  " ab.out &&
	grep -q "^watch-xid-poll  " ab.out &&
	grep -q "^  watch-xid-poll: runs nothing in the server; .* at least 0\.[0-9]* (lowest pair " ab.out
'

test_expect_success '--builtin tpcb-like: the script of pgbench, each run counted from its log' '
	pgbench -i -q -s 1 >init.out 2>&1 &&
	python3 "$ABRUN" --pg-pid "$PG_PID" --pgdata "$PGDATA" --pairs 1 --secs 0.4 --warm 0.2 \
		--clients 2 --threads 1 --commands tps --builtin tpcb-like --json tpcb.json \
		>tpcb.out 2>tpcb.err &&
	history=$(pg_sql "select count(*) from pgbench_history") &&
	json_py "
cfg = lines[0]
assert cfg[\"builtin\"] == \"tpcb-like\" and cfg[\"workload\"] == \"tpcb-like\", cfg
runs = [r for r in lines if r[\"report\"] == \"run\"]
assert [r[\"traced\"] for r in runs] == [False, True], runs
for r in runs:
    assert r[\"logged_transactions\"] == r[\"pgbench_transactions\"] > 0, r
    assert 0 < r[\"transactions\"] < r[\"pgbench_transactions\"], r
# the script inserts one row of pgbench_history per transaction (pgbench -i left it
# empty): the transactions pgbench ran were that script, every one of them counted
total = sum(r[\"pgbench_transactions\"] + r[\"discarded_transactions\"] for r in runs)
assert total == $history, (total, $history)
" <tpcb.json &&
	grep -q "^tpcb-like workload, " tpcb.out &&
	grep -q "^tps  " tpcb.out
'

test_expect_success 'an unknown command: exit 2, the error names it, a hint lists them' '
	test_expect_code 2 python3 "$ABRUN" --pg-pid "$PG_PID" --pgdata "$PGDATA" --commands tps,nope \
		>bad.out 2>bad.err &&
	grep -q "^error: unknown command .nope." bad.err &&
	grep -q "^hint: one of tps, " bad.err &&
	test_must_be_empty bad.out
'

test_expect_success '--perf without perf: exit 1 before any run, the error names it, a hint' '
	mkdir -p noperf &&
	# the interpreter itself, not a wrapper script that needs PATH
	py=$(python3 -c "import sys; print(sys.executable)") &&
	PATH=$TRASH/noperf test_expect_code 1 "$py" "$ABRUN" --pg-pid "$PG_PID" \
		--pgdata "$PGDATA" --workdir noperf --commands tps --diag --perf >np.out 2>np.err &&
	grep -q "^error: --perf needs perf, which is not installed" np.err &&
	grep -q "^hint: apt-get install linux-perf" np.err &&
	test_must_be_empty np.out &&
	# nothing written, nothing run
	test -z "$(ls -A noperf)"
'

test_expect_success 'an unknown built-in script: exit 2, the error names it, a hint lists them' '
	test_expect_code 2 python3 "$ABRUN" --pg-pid "$PG_PID" --pgdata "$PGDATA" --builtin tpcc \
		>badb.out 2>badb.err &&
	grep -q "^error: unknown pgbench built-in script .tpcc." badb.err &&
	grep -q "^hint: one of tpcb-like, simple-update, select-only$" badb.err &&
	test_must_be_empty badb.out
'

test_done
