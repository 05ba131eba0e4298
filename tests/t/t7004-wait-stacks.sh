#!/bin/bash
test_description='dbtap wait --stacks: an off-CPU flame graph with the wait event at the root'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

test_expect_success '--stacks -o FILE.folded: PgSleep at the root over the sleep, its time in us' '
	trace_start w1.json wait --pg="$PGDATA" -j --stacks -o off.folded &&
	psql -XAtq -c "select pg_sleep(0.5)" >/dev/null &&
	trace_stop &&
	test_grep "^wrote off.folded: " w1.json.err &&
	python3 - off.folded w1.json <<-\PY
	import json, sys
	lines = [l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
	d = json.loads(open(sys.argv[2]).read().splitlines()[-1])
	sleep = [(s, int(n)) for s, n in lines if s.startswith("Timeout:PgSleep;")]
	assert sleep, lines[:5]
	us = sum(n for _, n in sleep)
	row = [w for w in d["waits"] if w["wait_event"] == "PgSleep"][0]
	# the same stretches as the report: their time, rounded to the microsecond each
	assert abs(us - row["wait_ns"] / 1000) <= row["count"], (us, row)
	# the user stack of pg_sleep, and the kernel sleeping under it
	assert any("pg_sleep" in s for s, _ in sleep), sleep
	assert any("schedule" in s for s, _ in sleep), sleep
	# nothing idle unless asked, and no CPU time: off-CPU stacks only
	assert not [s for s, _ in lines if s.startswith("Client:ClientRead;")] or d["idle_included"], lines
	assert d["dropped"]["stacks_lost"] >= 0
	PY
'

test_expect_success '--stacks -o FILE.svg: a flame graph' '
	trace_start w2.json wait --pg="$PGDATA" -j --stacks -o off.svg &&
	psql -XAtq -c "select pg_sleep(0.3)" >/dev/null &&
	trace_stop &&
	test_grep "<svg" off.svg &&
	test_grep "Timeout:PgSleep" off.svg &&
	test_grep "Off-CPU time by wait event" off.svg
'

test_expect_success '-o in a directory that does not exist: an error naming it, the report still out' '
	trace_start w3.json wait --pg="$PGDATA" -j --stacks -o nodir/off.folded &&
	trace_stop;
	test_grep "^error: cannot write '"'nodir/off.folded'"'" w3.json.err &&
	test_grep "^hint: " w3.json.err &&
	json_py "assert d[\"report\"] == \"summary\"" <w3.json
'

test_done
