#!/bin/bash
test_description='dbtap wait: every wait event name of the server version is what its pg_stat_activity prints'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

test_expect_success 'set up a cluster and a sleeping backend' '
	pg_start pg "autovacuum = off" &&
	{ psql -XAtq -c "select pg_sleep(100000)" >/dev/null 2>&1 & } &&
	for i in $(seq 1 100); do
		spid=$(pg_sql "select pid from pg_stat_activity where query = '"'select pg_sleep(100000)'"'") &&
		test -n "$spid" && break
		sleep 0.05
	done &&
	test -n "$spid" && test_atexit "kill $spid"
'

# The independent truth is the server itself: each id is written into the sleeping
# backend's own wait event word (found here from the binary's .dynsym and the
# backend's maps, not by dbtap) and pg_stat_activity, read by another backend, names it.
test_expect_success 'each id of --list-events: pg_stat_activity prints the same type and name' '
	dbtap wait --pg="$PGDATA" --list-events -j >events.json &&
	dbtap wait --pg="$PGDATA" --list-events >events.txt 2>events.err &&
	test_grep "^ID  *TYPE  *EVENT" events.txt &&
	test_grep "^0x09[0-9a-f]*   Timeout  *PgSleep$" events.txt &&
	python3 - "$spid" events.json <<-\PY
	import json, os, struct, subprocess, sys
	pid = int(sys.argv[1])
	exe = os.readlink("/proc/%d/exe" % pid)
	syms = subprocess.run(["readelf", "--dyn-syms", "-W", exe], capture_output=True, text=True).stdout
	sym = [int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == ["my_wait_event_info"]]
	if not sym:
	    print("the server has no my_wait_event_info (PostgreSQL < 14): not checked here")
	    sys.exit(0)
	start = [int(l.split()[0].split("-")[0], 16) for l in open("/proc/%d/maps" % pid)
	         if l.split()[-1] == exe and l.split()[2] == "00000000"][0]
	sym = sym[0]
	mem = os.open("/proc/%d/mem" % pid, os.O_RDWR)
	word = struct.unpack("<Q", os.pread(mem, 8, start + sym))[0]
	orig = os.pread(mem, 4, word)
	# one psql session asks every question (a psql per id would cost seconds): each
	# query is its own transaction, so each reads the word anew; \echo marks its end
	psql = subprocess.Popen(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-F", "|"],
	                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
	def ask(sql):
	    psql.stdin.write(sql + ";\n\\echo --end--\n")
	    psql.stdin.flush()
	    out = []
	    for l in psql.stdout:
	        if l == "--end--\n":
	            return "".join(out)
	        out.append(l)
	    raise SystemExit("psql ended: %s" % sql)
	def server_says(info):
	    for _ in range(3):
	        os.pwrite(mem, struct.pack("<I", info), word)
	        out = ask("select wait_event_type, wait_event from pg_stat_activity"
	                  " where pid = %d" % pid)
	        if struct.unpack("<I", os.pread(mem, 4, word))[0] == info:
	            return tuple(out.strip().split("|"))
	    raise SystemExit("the backend kept rewriting its wait event")
	events = [json.loads(l) for l in open(sys.argv[2])]
	assert len(events) > 200, len(events)
	assert all(e["report"] == "wait_event" for e in events), events[0]
	bad = []
	for e in events:
	    got = server_says(e["wait_event_info"])
	    if got != (e["wait_event_type"], e["wait_event"]):
	        bad.append((hex(e["wait_event_info"]), got, e["wait_event_type"], e["wait_event"]))
	# the id after the last of a class is one the server does not know either
	last = {}
	for e in events:
	    last[e["wait_event_info"] >> 24] = max(last.get(e["wait_event_info"] >> 24, 0), e["wait_event_info"])
	for cls, info in last.items():
	    if cls in (0x01, 0x04, 0x07):
	        continue  # tranches of extensions; one name for the whole class
	    got = server_says(info + 1)
	    if got[1] not in ("unknown wait event", "???", ""):
	        bad.append((hex(info + 1), got, "past the end"))
	os.pwrite(mem, orig, word)
	psql.stdin.close()
	assert psql.wait() == 0
	assert not bad, bad
	print(len(events), "ids checked")
	PY
'

test_done
