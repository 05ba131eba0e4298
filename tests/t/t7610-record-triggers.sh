#!/bin/bash
test_description='dbtap record: tps-drop and tps triggers when the load stops, not before; max-captures'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/record.sh

pg_start || test_bail "cannot start a test cluster"
pgbench -i -q -s 1 >init.log 2>&1 || test_bail "pgbench -i failed"

# pgbench is stopped (SIGSTOP) at a time the test notes: from then on no transaction of
# its clients ends, so the cluster's tps falls to what its background processes run.
test_expect_success 'the load stops: tps-drop>50% and tps<10 fire after it, with the figures of the stop' '
	pgbench -n -c 2 -j 1 -R 100 -T 60 >bench.log 2>&1 &
	bench=$! &&
	test_when_finished "kill -CONT $bench; kill $bench 2>/dev/null" &&
	trace_start rec.json record --pg "$PGDATA" --keep 5s --post 1s --cooldown 0 --max-captures 1/h \
		--trigger "tps-drop>50% for 2s" --trigger "tps<10 for 2s" -o caps -j &&
	sleep 13 &&
	stop=$(date +%s.%N) &&
	kill -STOP $bench &&
	wait_line rec.json "d[\"report\"] == \"trigger\" and d[\"metric\"] == \"tps\"" 20 &&
	wait_line rec.json "d[\"report\"] == \"trigger\" and d[\"metric\"] == \"tps-drop\"" 20 &&
	wait_line rec.json "d[\"report\"] == \"capture\"" 20 &&
	kill -CONT $bench &&
	trace_stop &&
	echo "$stop" >stop &&
	json_py "
import json
lines = [json.loads(l) for l in open(\"rec.json\")]
s = json.load(open([l for l in lines if l[\"report\"] == \"capture\"][0][\"path\"] + \"/summary.json\"))
stop = float(open(\"stop\").read()) - s[\"start_realtime_s\"]
trig = [l for l in lines if l[\"report\"] == \"trigger\"]
by = {t[\"metric\"]: t for t in trig}
assert len(trig) == 2, trig                      # nothing fired while pgbench ran
assert all(t[\"onset_s\"] >= stop - 1.01 for t in trig), (stop, trig)
assert by[\"tps\"][\"value\"] < 10 and by[\"tps-drop\"][\"value\"] > 50, by
# the first captures, the other finds it in progress or the hour full
assert sorted(t[\"captured\"] for t in trig) == [False, True], trig
no = [t for t in trig if not t[\"captured\"]][0]
assert no[\"why_not\"] in (\"a capture is in progress\", \"max-captures\"), no
assert s[\"before\"][\"tps\"] > 50, s[\"before\"]
" <rec.json
'

test_done
