#!/bin/bash
test_description='every command'"'"'s every -j line carries the envelope docs/json.md describes'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

DOC="$TEST_ROOT/docs/json.md"
envelope() {
	python3 "$TEST_LIB/envelope.py" "$DOC" "$@"
}

# load: transactions with XIDs in a loop while a command runs (in the background; one
# psql per statement, so that killing the loop ends it)
load_start() {
	{ while :; do psql -XAtqc "select txid_current()" >/dev/null 2>&1; sleep 0.02; done; } &
	LOAD_PID=$!
	test_when_finished 'kill $LOAD_PID 2>/dev/null; wait $LOAD_PID 2>/dev/null; :'
}

test_expect_success 'the checker itself refuses what docs/json.md does not allow' '
	printf "%s\n" "{\"report\":\"summary\",\"time_s\":1,\"duration_s\":1,\"end\":\"duration\"}" >ok.json &&
	envelope ok.json summary &&
	printf "%s\n" "{\"summary\":true,\"time\":1}" >old.json &&
	test_must_fail envelope old.json &&
	printf "%s\n" "{\"report\":\"total\",\"time_s\":1}" >kind.json &&
	test_must_fail envelope kind.json &&
	printf "%s\n" "{\"report\":\"interval\",\"time_s\":1,\"interval_s\":1,\"mean_ms\":3}" >unit.json &&
	test_must_fail envelope unit.json &&
	printf "%s\n" "{\"report\":\"interval\",\"time_s\":1.0000001,\"interval_s\":1}" >prec.json &&
	test_must_fail envelope prec.json &&
	printf "%s\n" "{\"report\":\"summary\",\"time_s\":1,\"duration_s\":1,\"end\":\"duration\",\"processes\":[{\"pid\":1}]}" >bd.json &&
	test_must_fail envelope bd.json &&
	printf "%s\n" "{\"report\":\"interval\",\"time_s\":1,\"interval_s\":1}" \
		"{\"report\":\"summary\",\"time_s\":1.5,\"duration_s\":1.5,\"end\":\"duration\"}" >tail.json &&
	test_must_fail envelope tail.json interval summary
'

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

test_expect_success 'doctor' '
	dbtap doctor --pg="$PGDATA" -j >doctor.json &&
	envelope doctor.json summary
'

test_expect_success 'pg' '
	dbtap pg --pg="$PGDATA" -j >pg.json &&
	envelope pg.json cluster
'

test_expect_success 'tps' '
	load_start &&
	dbtap tps --pg="$PGDATA" -j -i 0.2 -d 1 --by pid >tps.json &&
	envelope tps.json interval summary
'

test_expect_success 'latency' '
	load_start &&
	dbtap latency --pg="$PGDATA" -j -i 0.2 -d 1 --by type query >latency.json &&
	envelope latency.json interval summary
'

test_expect_success 'count' '
	load_start &&
	dbtap count --pg="$PGDATA" -j -i 0.2 -d 1 --by database usdt:postgresql:transaction__start >count.json &&
	envelope count.json interval summary
'

test_expect_success 'watch (trap, with events) and watch --layouts' '
	load_start &&
	watch_start watch.json xid --pg="$PGDATA" -j -i 0.2 -d 1 --by user --events &&
	watch_wait &&
	envelope watch.json interval event summary &&
	dbtap watch --layouts -j >layouts.json &&
	envelope layouts.json layout
'

test_expect_success 'watch --mode poll' '
	load_start &&
	dbtap watch xid --pg="$PGDATA" -j -i 0.2 -d 1 --mode poll >poll.json 2>/dev/null &&
	envelope poll.json interval summary
'

# Side by side, as the text test below: the --compare run needs the --by query one.
test_expect_success 'stat' '
	load_start &&
	{ dbtap stat --pg="$PGDATA" -j -i 0.2 -d 1 >stat.json 2>/dev/null & p1=$!; } &&
	{ dbtap stat --pg="$PGDATA" -j -i 0.2 -d 1 --by transaction >statt.json 2>/dev/null &
	  p2=$!; } &&
	{ dbtap stat --pg="$PGDATA" -j -i 0.2 -d 1 --by pid -e task-clock >statp.json 2>/dev/null &
	  p3=$!; } &&
	{ dbtap stat --pg="$PGDATA" -j -d 0.5 --by user -e task-clock >statu.json 2>/dev/null &
	  p4=$!; } &&
	dbtap stat --pg="$PGDATA" -j -i 0.2 -d 1 --by query >statq.json 2>/dev/null &&
	dbtap stat --pg="$PGDATA" -j -d 0.5 --compare statq.json --by query >statc.json 2>/dev/null &&
	wait $p1 && wait $p2 && wait $p3 && wait $p4 &&
	envelope stat.json interval summary &&
	envelope statq.json interval summary &&
	envelope statt.json interval summary &&
	envelope statp.json interval summary &&
	envelope statu.json summary &&
	envelope statc.json summary
'

test_expect_success 'profile' '
	load_start &&
	dbtap profile --pg="$PGDATA" -j -i 0.2 -d 1 >profile.json 2>/dev/null &&
	envelope profile.json interval summary &&
	dbtap profile --pg="$PGDATA" -j -d 1 --events >pevents.json 2>/dev/null &&
	envelope pevents.json event summary
'

test_expect_success 'profile --timeline and record' '
	load_start &&
	dbtap profile --timeline --pg="$PGDATA" -j -d 1 >tl.json 2>/dev/null &&
	envelope tl.json summary &&
	dbtap record --pg="$PGDATA" -j -d 3 --trigger "tps>=0" --post 0 -o caps >rec.json 2>/dev/null &&
	envelope rec.json trigger capture summary
'

test_expect_success 'wait' '
	load_start &&
	dbtap wait --pg="$PGDATA" -j -i 0.2 -d 1 >wait.json 2>/dev/null &&
	envelope wait.json interval summary &&
	dbtap wait --pg="$PGDATA" -j --list-events >wevents.json 2>/dev/null &&
	envelope wevents.json wait_event
'

# stamps FILE: the interval stamps of a text report ("%9.3f  ", seconds since the start,
# as docs/json.md's time_s), one a line; fails unless they rise, the last one is the end
# of the run (-d 1: the partial last interval is printed) and the summary follows.
stamps() {
	python3 - "$1" <<-\EOF
	import re, sys
	text = open(sys.argv[1]).read().splitlines()
	st = [float(m.group(1)) for m in (re.match(r"^ {0,8}(\d+\.\d{3})  ", l) for l in text) if m]
	# An interval report, then the partial last one. The k-th tick comes at its point of
	# the 0.3 s grid or later, never early; how many fit in 1 s depends on how long each
	# report takes (profile's first symbolizes): a tick that passed during a report is
	# skipped (src/util/runloop.c), so the count is not a fixed 4 on a loaded machine.
	assert len(st) >= 2, (st, text[:20])
	assert all(t >= 0.3 * (i + 1) - 0.001 for i, t in enumerate(st[:-1])), st
	assert st == sorted(st) and len(set(st)) == len(st), st
	assert st[-1] >= 1.0, st
	assert any(l.startswith("total over ") for l in text), text[-10:]
	EOF
}

# The commands run side by side (each its own probes on the one cluster): the seconds
# they wait are spent once.
test_expect_success 'text: the same interval stamp in every command, the last partial interval printed' '
	load_start &&
	cmds=(tps "latency query" "count usdt:postgresql:transaction__start" "watch xid"
	      stat "stat --by query -e task-clock" profile wait) &&
	pids=() && rcs=() &&
	for i in "${!cmds[@]}"; do
		dbtap ${cmds[$i]} --pg="$PGDATA" -i 0.3 -d 1 >text.$i.out 2>text.$i.err &
		pids[$i]=$!
	done &&
	for i in "${!cmds[@]}"; do
		wait ${pids[$i]}
		rcs[$i]=$?
	done &&
	for i in "${!cmds[@]}"; do
		test ${rcs[$i]} = 0 && stamps text.$i.out ||
		{ echo "dbtap ${cmds[$i]}: exit ${rcs[$i]}"; cat text.$i.out text.$i.err; return 1; }
	done
'

test_expect_success 'bench and bench pgbench' '
	dbtap bench --quick -j uprobe-nop >bench.json 2>/dev/null &&
	envelope bench.json config row summary &&
	dbtap bench pgbench --pg "$PGDATA" -d 0.5 -c 1 -j >pgbench.json 2>/dev/null &&
	envelope pgbench.json row summary
'

test_expect_success 'serve' '
	dbtap serve --pg="$PGDATA" --listen 127.0.0.1:0 -d 1 -j >serve.json 2>serve.err &&
	envelope serve.json summary
'

test_done
