#!/bin/bash
test_description='dbtap stat --compare: a second target, or a saved -j run, side by side'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/stat.sh

test_expect_success 'two processes at once: each its own faults, B/A their ratio' '
	wl_start a 1000 && a_pid=$wl_pid &&
	wl_start b 3000 && b_pid=$wl_pid &&
	stat_start ab.json -e page-faults,task-clock -p $a_pid --compare pid:$b_pid &&
	kill -USR1 $a_pid $b_pid &&
	wait_for_line a.out "^touched" && wait_for_line b.out "^touched" &&
	stat_stop &&
	json_py "
a = d[\"events\"][\"page-faults\"][\"value\"]
b = d[\"compare\"][\"events\"][\"page-faults\"][\"value\"]
assert 1000 <= a <= 1064 and 3000 <= b <= 3064, (a, b)
assert d[\"target\"] == \"pid $a_pid\" and d[\"compare\"][\"target\"] == \"pid $b_pid\", d
# JSON numbers carry 6 significant digits
assert abs(d[\"compare\"][\"ratio\"][\"page-faults\"] - b / a) < 1e-5 * b / a, d
" <ab.json &&
	kill $a_pid $b_pid
'

test_expect_success 'a saved run: its figures as saved, B/A of per-second rates' '
	wl_start s 2000 &&
	stat_start saved.json -e page-faults,task-clock -p $wl_pid &&
	kill -USR1 $wl_pid && wait_for_line s.out "^touched" &&
	stat_stop && kill $wl_pid &&
	wl_start l 500 &&
	stat_start live.json -e page-faults,task-clock,cpu-clock -p $wl_pid --compare saved.json &&
	kill -USR1 $wl_pid && wait_for_line l.out "^touched" &&
	stat_stop && kill $wl_pid &&
	json_py "
saved = [json.loads(l) for l in open(\"saved.json\")][-1]
c = d[\"compare\"]
sv = saved[\"events\"][\"page-faults\"][\"value\"]
assert 2000 <= sv <= 2064, saved
assert c[\"events\"][\"page-faults\"][\"value\"] == sv, (c, saved)
assert c[\"target\"] == \"saved run saved.json (pid %d)\" % int(saved[\"target\"].split()[1]), c
lv = d[\"events\"][\"page-faults\"][\"value\"]
assert 500 <= lv <= 564, d
assert c[\"duration_s\"] == saved[\"duration_s\"], (c, saved)
want = (sv / saved[\"duration_s\"]) / (lv / d[\"duration_s\"])
# JSON numbers carry 6 significant digits
assert abs(c[\"ratio\"][\"page-faults\"] - want) < 1e-5 * want, (c[\"ratio\"], want)
# an event the saved run did not count is not invented
cc = c[\"events\"][\"cpu-clock\"]
assert cc[\"counted\"] is False and cc[\"value_ns\"] is None, cc
assert cc[\"reason\"] == \"not in the saved run\", cc
assert c[\"ratio\"][\"cpu-clock\"] is None, c
" <live.json
'

test_expect_success 'saved runs of another kind, or not JSON, are refused' '
	wl_start r spin &&
	echo "not json" >bad.json &&
	test_expect_code 2 dbtap stat -p $wl_pid --compare bad.json 2>e1 &&
	test_grep "line 1 is not JSON" e1 &&
	test_expect_code 2 dbtap stat -p $wl_pid --by query --compare saved.json 2>e2 &&
	test_grep "is a saved counting run, not a --by query run" e2 &&
	test_grep "^hint: save a run of the same kind: dbtap -j stat --by query" e2 &&
	test_expect_code 2 dbtap stat -p $wl_pid --by tid --compare pid:$wl_pid 2>e3 &&
	test_grep "not --by tid" e3 &&
	sed "s/\"report\":\"summary\"/\"report\":\"total\"/" saved.json >old.json &&
	test_expect_code 2 dbtap stat -p $wl_pid --compare old.json 2>e4 &&
	test_grep "^error: .old.json. line 1: a report of an older dbtap" e4 &&
	test_grep "^hint: save the run again" e4 &&
	grep -v "\"report\":\"summary\"" saved.json >nosum.json; echo "{\"report\":\"interval\"}" >>nosum.json &&
	test_expect_code 2 dbtap stat -p $wl_pid --compare nosum.json 2>e5 &&
	test_grep "holds no summary line" e5 &&
	kill $wl_pid
'

test_expect_success 'files that are no saved run: refused, saying why, before reading them' '
	mkfifo fifo &&
	mkdir dir &&
	head -c 4096 /bin/sh >binary &&
	truncate -s 17M big.json &&
	for f in fifo:"is a FIFO" /dev/zero:"is a character device" dir:"is a directory" \
		 binary:"holds a NUL byte" big.json:"more than the 16777216" \
		 /nonexistent/x:"not a target nor a file"; do
		test_expect_code 2 timeout 10 "$DBTAP" stat -p $$ --compare "${f%%:*}" >out 2>err &&
		test_grep "^error: .*${f#*:}" err &&
		test_grep "^hint: " err &&
		test ! -s out || return 1
	done
'

test_expect_success 'edited saved runs: zero, negative or mistyped figures are refused' '
	for edit in "duration_s=0:\"duration_s\" is 0" "duration_s=-1:\"duration_s\" is out of range" \
		    "duration_s=\"10\":\"duration_s\" is not a number" \
		    "duration_s=None:\"duration_s\" is missing" \
		    "target=5:\"target\" is not a string" \
		    "pf.value=-5:\"value\" of \"page-faults\" is out of range" \
		    "pf.value=\"x\":\"value\" of \"page-faults\" is not a number" \
		    "pf.running_pct=150:\"running_pct\" of \"page-faults\" is out of range" \
		    "pf.counted=1:\"counted\" of \"page-faults\" is not true or false" \
		    "events=[]:\"events\" is not an object"; do
		python3 -c "
import json, sys
lines = [json.loads(l) for l in open(\"saved.json\")]
t = lines[-1]
k, v = sys.argv[1].split(\"=\", 1)
v = eval(v)
if k.startswith(\"pf.\"):
    t[\"events\"][\"page-faults\"][k[3:]] = v
elif v is None:
    del t[k]
else:
    t[k] = v
open(\"edited.json\", \"w\").write(\"\\n\".join(json.dumps(l) for l in lines) + \"\\n\")
" "${edit%%:*}" &&
		test_expect_code 2 dbtap stat -p $$ --compare edited.json >out 2>err &&
		grep -F -e "${edit#*:}" err &&
		test_grep "^hint: " err &&
		test ! -s out || return 1
	done
'

test_done
