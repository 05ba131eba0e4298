#!/bin/bash
test_description='dbtap record: tps-drop and tps triggers when the load stops, not before; max-captures; the systemd unit of the docs'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/record.sh

pg_start || test_bail "cannot start a test cluster"
pgbench -i -q -s 1 >init.log 2>&1 || test_bail "pgbench -i failed"

# pgbench is stopped (SIGSTOP) at a time the test notes: from then on no transaction of
# its clients ends, so the cluster's tps falls to what its background processes run.
# Two recorders side by side: the markers read at the switch-outs (the default on 15 and
# 16) and from the probes (--usdt); each must fire as the other. The load runs 11 s of
# the recorders' seconds, what tps-drop needs before it measures (the mean of at least
# 10 seconds before the one it tests).
USDT_PID=
test_atexit '[ -n "$USDT_PID" ] && kill -KILL "$USDT_PID" 2>/dev/null'
test_expect_success 'the load stops: tps-drop>50% and tps<10 fire after it, with the figures of the stop; both ways' '
	pgbench -n -c 2 -j 1 -R 100 -T 60 >bench.log 2>&1 &
	bench=$! &&
	test_when_finished "kill -CONT $bench; kill $bench 2>/dev/null" &&
	trace_start rec-usdt.json record --pg "$PGDATA" --usdt --keep 5s --post 1s --cooldown 0 \
		--max-captures 1/h --trigger "tps-drop>50% for 2s" --trigger "tps<10 for 2s" \
		-o caps-usdt -j &&
	USDT_PID=$TRACE_PID &&
	trace_start rec.json record --pg "$PGDATA" --keep 5s --post 1s --cooldown 0 --max-captures 1/h \
		--trigger "tps-drop>50% for 2s" --trigger "tps<10 for 2s" -o caps -j &&
	sleep 11 &&
	stop=$(date +%s.%N) &&
	kill -STOP $bench &&
	for f in rec.json rec-usdt.json; do
		wait_line $f "d[\"report\"] == \"trigger\" and d[\"metric\"] == \"tps\"" 20 &&
		wait_line $f "d[\"report\"] == \"trigger\" and d[\"metric\"] == \"tps-drop\"" 20 &&
		wait_line $f "d[\"report\"] == \"capture\"" 20 || return 1
	done &&
	kill -CONT $bench &&
	trace_stop &&
	kill -INT $USDT_PID && wait $USDT_PID && USDT_PID= &&
	echo "$stop" >stop &&
	for f in rec rec-usdt; do
	json_py "
import json
lines = [json.loads(l) for l in open(\"$f.json\")]
s = json.load(open([l for l in lines if l[\"report\"] == \"capture\"][0][\"path\"] + \"/summary.json\"))
assert s[\"markers_from\"] == d[\"markers_from\"] == (\"usdt\" if \"$f\" == \"rec-usdt\" else \"PgBackendStatus\"), s
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
" <$f.json || return 1
	done
'

# The unit in docs/record.md, as written there, and its command line as systemd splits it.
unit_py='
import shlex, sys
s = open(sys.argv[1]).read()
i = s.index("    # /etc/systemd/system/dbtap-record.service")
block = []
for l in s[i:].split("\n")[1:]:
    if l and not l.startswith("    "):
        break
    block.append(l[4:])
unit = "\n".join(block).strip() + "\n"
if sys.argv[2] == "unit":
    print(unit.replace("/usr/local/bin/dbtap", sys.argv[3]), end="")
else:
    cmd = unit.split("ExecStart=")[1].split("\n# ")[0].replace("\\\n", " ").split("\n")[0]
    print("\n".join(shlex.split(cmd)[1:]))
'
test_lazy_prereq SYSTEMD_ANALYZE 'command -v systemd-analyze >/dev/null'

test_expect_success SYSTEMD_ANALYZE 'the systemd unit of docs/record.md passes systemd-analyze verify' '
	python3 -c "$unit_py" "$TEST_ROOT/docs/record.md" unit "$DBTAP" >dbtap-record.service &&
	test_grep "^ExecStart=$DBTAP record " dbtap-record.service &&
	systemd-analyze verify ./dbtap-record.service
'

test_expect_success 'its command line runs as written, on a test cluster' '
	python3 -c "$unit_py" "$TEST_ROOT/docs/record.md" args >args &&
	test_grep "^--pg$" args && test_grep "^-o$" args &&
	# the cluster and the directory are the test'"'"'s; every other option as in the docs
	sed -e "/^--pg$/{n;s#.*#$PGDATA#}" -e "/^-o$/{n;s#.*#unit-caps#}" args >args.test &&
	mapfile -t a <args.test &&
	dbtap "${a[@]}" -d 2 >unit.json 2>unit.err &&
	json_py "
assert d[\"report\"] == \"summary\" and d[\"captures\"] == 0, d
" <unit.json &&
	test -d unit-caps
'

test_done
