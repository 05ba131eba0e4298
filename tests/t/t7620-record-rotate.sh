#!/bin/bash
test_description='dbtap record: the kernel'"'"'s stack maps emptied while recording, the kept samples keep their stacks; --max-captures; SIGTERM during a capture'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh
. "$TEST_LIB"/record.sh

[ -x "$WORKLOADS/tlphases" ] || test_bail "$WORKLOADS/tlphases is not built: run make"

test_expect_success 'rotations every second; a SIGUSR2 capture names the stacks of samples taken before them' '
	tlphases_start tlp.out -n 2 -b 3 -i 0.5 &&
	trace_start rec.json -v record -p $TLP_PID --keep 20s --rotate 1 -F 199 -o caps -j &&
	kill -USR1 $TLP_PID &&
	sleep 5 &&
	kill -USR2 $TRACE_PID &&
	wait_line rec.json "d[\"report\"] == \"capture\"" 20 &&
	trace_wait &&
	json_py "
assert d[\"stack_rotations\"] >= 3, d
" <rec.json &&
	# the kernel let stacks go: the maps were emptied while samples were kept
	test_grep "stacks rotated: [1-9][0-9]* let go" rec.json.err &&
	folded=$(ls caps/*/profile.folded) &&
	python3 - $folded <<-\PY
	import sys
	n = lost = spin = 0
	for l in open(sys.argv[1]):
	    frames, _, c = l.rstrip("\n").rpartition(" ")
	    f, c = frames.split(";"), int(c)
	    n += c
	    lost += c * ("[stack lost]" in f)
	    spin += c * ("spin" in f)
	print(n, lost, spin)
	assert n >= 100, n
	# a sample taken while the maps were being emptied may lose its stack: a few at most
	assert lost <= 0.02 * n, (lost, n)
	assert spin >= 0.9 * n, (spin, n)
	PY
'

# Two busy phases, an idle one between them with whole seconds of no sample: "cpu>0%"
# holds in each busy phase and stops in between, so the trigger fires twice.
test_expect_success '--max-captures 1/h: the second firing is held back; SIGTERM during a --post finishes that capture' '
	tlphases_start tlp2.out -n 1 -b 2 -i 2.5 &&
	trace_start mc.json record -p $TLP_PID --keep 2s --post 0 --cooldown 0 --max-captures 1/h \
		--trigger "cpu>0%" -o mc -j &&
	mc=$TRACE_PID &&
	trace_start term.json record -p $TLP_PID --keep 5s --post 60s --trigger "cpu>0%" -o term -j &&
	kill -USR1 $TLP_PID &&
	wait_line term.json "d[\"report\"] == \"trigger\" and d[\"captured\"]" 20 &&
	trace_stop TERM &&
	term_end=$(date +%s.%N) &&
	TRACE_PID=$mc &&
	trace_wait &&
	echo "$term_end" >term_end &&
	json_py "
import json
lines = [json.loads(l) for l in open(\"mc.json\")]
trig = [l for l in lines if l[\"report\"] == \"trigger\"]
caps = [l for l in lines if l[\"report\"] == \"capture\"]
assert [t[\"captured\"] for t in trig] == [True, False], trig
assert trig[1][\"why_not\"] == \"max-captures\", trig
assert len(caps) == 1 and d[\"captures\"] == 1 and d[\"triggers_fired\"] == 2, (caps, d)
" <mc.json &&
	json_py "
import json, os
end = float(open(\"term_end\").read())
caps = [l for l in lines if l[\"report\"] == \"capture\"]
assert len(caps) == 1 and d[\"report\"] == \"summary\" and d[\"captures\"] == 1, lines
c = caps[0]
assert os.path.isdir(c[\"path\"]) and not os.path.basename(c[\"path\"]).startswith(\".\"), c
s = json.load(open(c[\"path\"] + \"/summary.json\"))
# cut at the signal, not 60 s of --post later
assert s[\"fired_s\"] <= s[\"window\"][\"end_s\"] <= end - s[\"start_realtime_s\"] + 0.5, (s, end)
for f in s[\"files\"]:
    assert os.path.getsize(c[\"path\"] + \"/\" + f) > 0, f
assert not [n for n in os.listdir(\"term\") if n.endswith(\".partial\")]
" <term.json
'

test_done
