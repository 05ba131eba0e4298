#!/bin/bash
# t0100: make demo's Ctrl-C: the running part stops, then the demo, leaving nothing.
test_description='tools/demo: Ctrl-C mid-run stops it and removes its cluster and files'
. "$(dirname "$0")"/../lib/test-lib.sh

test_expect_success 'SIGINT to the demo (as a terminal sends it) during a part' '
	slots_before=$(bp_slots_free) &&
	python3 - "$TEST_ROOT/tools/demo" >demo.result <<-\EOF
	import os, re, signal, subprocess, sys, time
	out = open("demo.log", "w")
	# SIGINT acts as at a terminal, also when the suite itself was started in the
	# background (a shell ignores SIGINT in what it starts with &)
	p = subprocess.Popen([sys.argv[1]], stdout=out, stderr=subprocess.STDOUT,
	                     start_new_session=True,
	                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
	# Ctrl-C once the first dbtap part is running (after doctor and pg).
	deadline = time.time() + 180  # a loaded machine: waits, not timings
	while time.time() < deadline and "== 30-watch" not in open("demo.log").read():
	    time.sleep(0.1)
	time.sleep(1)
	os.killpg(p.pid, signal.SIGINT)
	rc = p.wait(timeout=180)
	log = open("demo.log").read()
	print(rc)
	print(re.search(r"cluster: (\S+), port \d+, postmaster pid (\d+)", log).group(2))
	print(re.search(r"Starting a cluster in (\S+) ", log).group(1))
	EOF
	{ read rc; read pm; read trash; } <demo.result &&
	test "$rc" = 130 &&
	test_grep "== 30-watch" demo.log &&
	test_must_fail grep -q "== 40-tps" demo.log &&
	# pg_ctl -w returns once postmaster.pid is gone: the process itself ends just after.
	for i in $(seq 1 50); do test -e "/proc/$pm" || break; sleep 0.1; done &&
	! test -e "/proc/$pm" &&
	! test -e "$trash" &&
	test_must_fail pgrep -f "$trash"
'

test_expect_success 'the breakpoint slots free before the demo are free afterwards' '
	bp_slots_back "$slots_before"
'

test_done
