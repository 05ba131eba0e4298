#!/bin/bash
test_description='dbtap profile --timeline: busy and idle phases of a workload'"'"'s threads, where the workload says they are'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

[ -x "$WORKLOADS/tlphases" ] || test_bail "$WORKLOADS/tlphases is not built: run make"

# Each cell of a thread's row held against what the thread itself got in that cell: its
# own CPU clock, read by the workload every millisecond as it spins and on each side of
# its sleep ("cpu NAME MONOTONIC THREAD_CPU"). A busy thread on a loaded machine is not
# on CPU all through its phase, so its phase's wall times are no truth for a cell; its
# CPU time is: -p samples on an event bound to the thread, whose timer runs only while
# the thread is on CPU and fires once per period (1/HZ) of it (t7500 holds the totals).
# So a cell in which the thread ran at most HI seconds has at most HI x HZ + 1 samples
# (25 % over for the clocks' differences: the timer runs while the thread is current,
# which also counts what the hypervisor took in between, steal that the thread's own
# clock leaves out), one in which it ran at least 4 periods has one at least, and the
# whole row is HZ x its CPU time within 5 % (as t7500 holds it). The sleep's cells get the CPU time of going to
# sleep and waking, some microseconds: one sample at most in all of them.
check_phases='
import bisect
HZ = 499
phases = [(l.split()[1], float(l.split()[2]), float(l.split()[3]))
          for l in open("tlp.out") if l.startswith("phase ")]
tids = {l.split()[1]: int(l.split()[2]) for l in open("tlp.out") if l.startswith("thread ")}
assert len(phases) == 3 and len(tids) == 2, (phases, tids)
clocks = {name: [] for name in tids}
for l in open("tlp.out"):
    if l.startswith("cpu "):
        _, name, m, c = l.split()
        clocks[name].append((float(m), float(c)))
base = d["start_monotonic_s"]
t0, cell = d["t0_s"], d["cell_s"]
rows = {t["tid"]: t for t in d["threads"]}
for name, tid in tids.items():
    r = rows[tid]
    assert r["name"] == name, (r["name"], name)
    at = clocks[name]
    ms, cs = [m for m, c in at], [c for m, c in at]
    # each spin reads the clocks as it starts and ends, at least: four readings
    assert len(at) >= 4 and ms == sorted(ms), (name, len(at))
    # the sleep: the one stretch between two readings longer than half the idle phase
    k = max(range(len(at) - 1), key=lambda k: ms[k + 1] - ms[k])
    sleep0, sleep1, sleep_cpu = ms[k], ms[k + 1], cs[k + 1] - cs[k]
    assert sleep1 - sleep0 >= 0.5 * (phases[1][2] - phases[1][1]), (name, sleep0, sleep1)
    in_sleep = 0
    held = 0
    for i, n in enumerate(r["cell_samples"]):
        a, b = base + t0 + i * cell, base + t0 + (i + 1) * cell
        # CPU in [a, b]: at least between the first reading after a and the last before
        # b, at most between the last reading before a and the first after b; before
        # the first reading and after the last the thread ran microseconds (its barrier,
        # its exit): one more sample at most
        lo_i, hi_i = bisect.bisect_left(ms, a), bisect.bisect_right(ms, b) - 1
        lo = cs[hi_i] - cs[lo_i] if 0 <= lo_i <= hi_i < len(ms) else 0.0
        pre = max(bisect.bisect_right(ms, a) - 1, 0)
        post = min(bisect.bisect_left(ms, b), len(ms) - 1)
        hi = cs[post] - cs[pre]
        tail = a < ms[0] or b > ms[-1]
        assert n <= int(hi * HZ * 1.25) + 1 + tail, ("more samples than CPU time", name, i, n, hi)
        if lo >= 4.0 / HZ:
            assert n > 0, ("a cell with CPU time and no sample", name, i, lo)
            held += 1
        if sleep0 <= a and b <= sleep1:
            in_sleep += n
    assert in_sleep <= int(sleep_cpu * HZ * 1.25) + 1, ("samples in the sleep", name, in_sleep, sleep_cpu)
    cpu = cs[-1] - cs[0]
    assert abs(r["samples"] - HZ * cpu) <= 0.05 * HZ * cpu + 2, (name, r["samples"], HZ * cpu)
    print(name, "cpu %.3f s" % cpu, "samples", r["samples"], "cells held busy", held)
assert d["lost"]["ring_full"] == 0 and d["lost"]["kept_full"] == 0, d["lost"]
'

test_expect_success 'busy 1 s, idle 1 s, busy 1 s: each thread'"'"'s cells hold the samples its own CPU clock says' '
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
