#!/bin/bash
test_description='dbtap profile --timeline: busy and idle phases of a workload'"'"'s threads, where the workload says they are'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

[ -x "$WORKLOADS/tlphases" ] || test_bail "$WORKLOADS/tlphases is not built: run make"

# The workload's own CLOCK_MONOTONIC phase times, against the cells of the timeline:
# a cell wholly inside a busy phase has samples, one wholly inside the idle phase has
# none; only the cell on each boundary may go either way ("within one cell").
check_phases='
import re
phases = [(l.split()[1], float(l.split()[2]), float(l.split()[3]))
          for l in open("tlp.out") if l.startswith("phase ")]
tids = {l.split()[1]: int(l.split()[2]) for l in open("tlp.out") if l.startswith("thread ")}
assert len(phases) == 3 and len(tids) == 2, (phases, tids)
base = d["start_monotonic_s"]
t0, cell = d["t0_s"], d["cell_s"]
rows = {t["tid"]: t for t in d["threads"]}
busy_sets = []
for name, tid in tids.items():
    r = rows[tid]
    assert r["name"] == name, (r["name"], name)
    busy = set()
    for i, n in enumerate(r["cell_samples"]):
        a, b = base + t0 + i * cell, base + t0 + (i + 1) * cell
        inside = [k for k, p0, p1 in phases if p0 <= a and b <= p1]
        if inside == ["busy"]:
            assert n > 0, ("busy cell without samples", name, i, a - phases[0][1])
            busy.add(i)
        elif inside == ["idle"]:
            assert n == 0, ("idle cell with samples", name, i, n)
        elif not any(p0 < b and a < p1 for k, p0, p1 in phases):
            assert n == 0, ("cell outside the phases with samples", name, i, n)
    assert len(busy) >= 4, busy
    busy_sets.append(busy)
# aligned by the workload, aligned on the timeline
assert busy_sets[0] == busy_sets[1], busy_sets
assert d["lost"]["ring_full"] == 0 and d["lost"]["kept_full"] == 0, d["lost"]
print(sorted(busy_sets[0]))
'

test_expect_success 'busy 0-1 s, idle 1-2 s, busy 2-3 s: busy cells exactly there, two threads aligned' '
	tlphases_start tlp.out -n 2 &&
	trace_start tl.json profile --timeline -p $TLP_PID -F 499 --cells 20 -j &&
	tlphases_go &&
	trace_wait &&
	json_py "$check_phases" <tl.json &&
	test_grep "exited" tl.json.err
'

test_expect_success 'the text view: one row per thread, 100 columns at most, each row its share of CPU' '
	tlphases_start tlp2.out -n 2 -b 0.5 -i 0.5 &&
	trace_start tl2.txt profile --timeline -p $TLP_PID --top 5 &&
	tlphases_go &&
	trace_wait &&
	awk "length > 100 { print; bad = 1 } END { exit bad }" tl2.txt &&
	test_grep "^phase-0 " tl2.txt &&
	test_grep "^phase-1 " tl2.txt
'

test_expect_success 'the SVG: valid XML, a tick per sample on each thread'"'"'s row, stacks for the hover' '
	tlphases_start tlp3.out -n 2 -b 0.5 -i 0.5 &&
	trace_start tl3.json profile --timeline -p $TLP_PID -F 199 -o tl3.svg -j &&
	tlphases_go &&
	trace_wait &&
	python3 - <<-\PY
	import json, re, xml.etree.ElementTree as ET
	d = json.loads(open("tl3.json").read().splitlines()[-1])
	ns = {"s": "http://www.w3.org/2000/svg"}
	root = ET.parse("tl3.svg").getroot()
	rows = {int(g.get("data-tid")): g for g in root.iter("{http://www.w3.org/2000/svg}g")
	        if g.get("class") == "row"}
	script = [e.text for e in root.iter("{http://www.w3.org/2000/svg}script")][0]
	nstacks = script.count("],\n")
	for t in d["threads"]:
	    g = rows[t["tid"]]
	    ticks = [r for r in g.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "t"]
	    assert len(ticks) == t["samples"] == int(g.get("data-samples")), (len(ticks), t["samples"])
	    assert all(int(r.get("data-s")) < nstacks for r in ticks)
	assert "spin" in script, "the workload function is named in the stacks"
	PY
'

test_expect_success 'the Firefox Profiler file: the format'"'"'s required fields, a thread per row, samples = ticks' '
	tlphases_start tlp4.out -n 2 -b 0.5 -i 0.5 &&
	trace_start tl4.json profile --timeline -p $TLP_PID -F 199 -o tl4.json.gz -j &&
	tlphases_go &&
	trace_wait &&
	"$TEST_LIB"/gecko-check tl4.json.gz tl4.json
'

# The profiler's own import and processing code, from npm (@firefox-devtools/profiler-cli),
# when it is installed: it loads the file, counts the threads, names the hot function.
test_lazy_prereq PROFILER_CLI 'command -v profiler-cli >/dev/null'

test_expect_success PROFILER_CLI 'the Firefox Profiler'"'"'s own processing code loads the file' '
	export HOME="$TRASH" &&
	test_when_finished "profiler-cli stop >/dev/null 2>&1" &&
	for i in 1 2 3 4 5; do
		profiler-cli load tl4.json.gz >load.out 2>&1 && break
		sleep 1
	done &&
	profiler-cli profile info >info.out 2>&1 &&
	test_grep "2 threads" info.out &&
	test_grep "phase-0" info.out && test_grep "phase-1" info.out &&
	profiler-cli thread samples >samples.out 2>&1 &&
	test_grep "spin - self" samples.out
'

test_expect_success 'bad input: -o with an unknown suffix, --cells 0, no target' '
	test_expect_code 2 dbtap profile --timeline -p $$ -o x.png 2>e1 &&
	test_grep "cannot tell what to write to .x.png." e1 && test_grep "^hint:" e1 &&
	test_expect_code 2 dbtap profile --timeline -p $$ --cells 0 2>e2 &&
	test_grep "hint:" e2 &&
	test_expect_code 2 dbtap profile --timeline 2>e3 &&
	test_grep "needs a target" e3 &&
	! test -e x.png && ! test -e x.png.tmp
'

test_done
