#!/bin/bash
test_description='dbtap record: the kernel'"'"'s stack maps emptied while recording, the kept samples keep their stacks'
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

test_done
