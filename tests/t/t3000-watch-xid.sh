#!/bin/bash
test_description='dbtap watch xid: every XID assigned, by the backend that got it'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

# No autovacuum: the backends of each test are then the only ones assigning XIDs.
test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

test_expect_success 'a backend connecting after attach: N txid_current() = N writes, its pid' '
	watch_start w1.json xid --pg="$PGDATA" -j --events --by pid -i 0 &&
	xid_calls 40 pid1 >txids1 &&
	watch_stop &&
	pid=$(cat pid1) &&
	json_py "
pid = $pid
txids = [int(x) for x in open(\"txids1\")]
s = d
assert s[\"report\"] == \"summary\" and s[\"end\"] == \"interrupted\", s
assert s[\"total\"] == 40, s
assert s[\"processes\"] == [{\"pid\": pid, \"type\": \"client backend\", \"user\": \"postgres\", \"database\": \"postgres\", \"writes\": 40}], s
ev = [l for l in lines if l[\"report\"] == \"event\"]
assert len(ev) == 40 and s[\"events\"] == 40 and s[\"dropped\"] == 0, (len(ev), s)
assert all(e[\"pid\"] == pid for e in ev), ev
vals = [e[\"value\"] for e in ev]
assert all(b - a == 1 for a, b in zip(vals, vals[1:])), vals
# the value after each write is the XID just handed out + 1
assert vals == [t + 1 for t in txids], (vals, txids)
assert vals[-1] == txids[-1] + 1 and s[\"value\"] == txids[-1] + 1, s
" <w1.json
'

test_expect_success 'the breakpoint slots are free again after Ctrl-C' '
	slots_free
'

test_expect_success 'two backends at once: N and M writes, each to its own pid' '
	watch_start w2.json xid --pg="$PGDATA" -j --by pid -i 0.2 &&
	{ xid_calls 30 pidA >/dev/null & a=$!; } &&
	{ xid_calls 55 pidB >/dev/null & b=$!; } &&
	wait $a && wait $b &&
	watch_stop &&
	json_py "
a, b = int(open(\"pidA\").read()), int(open(\"pidB\").read())
s = d
per = {p[\"pid\"]: p[\"writes\"] for p in s[\"processes\"]}
assert per == {a: 30, b: 55}, per
assert s[\"total\"] == 85, s
iv = [l for l in lines if l[\"report\"] == \"interval\"]
# the last, partial interval included: the intervals add up to the total
assert sum(l[\"writes\"] for l in iv) == 85, iv
assert all(t[\"type\"] == \"client backend\" for t in s[\"processes\"]), s
" <w2.json
'

# Exited backends' counts move from the kernel's map to dbtap (so endless short
# connections never fill the map): none may be lost or counted twice on the way.
test_expect_success 'twenty short-lived connections: two writes each, per pid' '
	watch_start w6.json xid --pg="$PGDATA" -j -i 0.05 &&
	for i in $(seq 1 20); do
		xid_calls 2 "short.$i" >/dev/null || return 1
		sleep 0.06
	done &&
	watch_stop &&
	json_py "
pids = sorted(int(open(\"short.%d\" % i).read()) for i in range(1, 21))
per = {p[\"pid\"]: p[\"writes\"] for p in d[\"processes\"]}
assert sorted(per) == pids and set(per.values()) == {2}, per
assert d[\"total\"] == 40 and d[\"unattributed\"] == 0, d
assert sum(l[\"writes\"] for l in lines if l[\"report\"] == \"interval\") == 40
" <w6.json
'

# session_start NAME N: a backend that waits for NAME.go, then runs txid_current() N
# times; its pid in NAME.pid once it is connected.
session_start() {
	rm -f "$1.go" "$1.pid"
	{
		echo "select pg_backend_pid();"
		echo "\\! while [ ! -e $1.go ]; do sleep 0.05; done"
		for i in $(seq 1 "$2"); do echo "select txid_current();"; done
	} | psql -XAtq -v ON_ERROR_STOP=1 -f - >"$1.out" &
	session_bg=$!
	# up to 30 s: a loaded machine takes seconds to start psql and its backend
	for i in $(seq 1 600); do
		[ -s "$1.out" ] && head -n1 "$1.out" >"$1.pid" && return 0
		sleep 0.05
	done
	echo "session $1: no backend pid within 30 s"
	return 1
}

for opt in -p -t; do
	test_expect_success "xid $opt BACKEND: that backend's writes only, typed from its title" '
		session_start s 5 &&
		watch_start ws.json xid $opt "$(cat s.pid)" -j -i 0 &&
		xid_calls 3 other >/dev/null &&
		touch s.go && wait $session_bg &&
		# its one backend exits with psql: dbtap stops by itself (a Ctrl-C sent now could
		# find it gone)
		watch_wait &&
		json_py "
assert d[\"end\"] == \"target exited\", d
assert d[\"total\"] == 5 and d[\"ignored\"] == 3, d
assert d[\"processes\"] == [{\"pid\": $(cat s.pid), \"type\": \"client backend\", \"user\": \"postgres\", \"database\": \"postgres\", \"writes\": 5}], d
" <ws.json
	'
done

test_expect_success 'text: writes the -p filter left out are reported, with a hint toward --pg' '
	session_start s 2 &&
	watch_start wt.txt xid -p "$(cat s.pid)" -i 0 &&
	xid_calls 3 other >/dev/null &&
	touch s.go && wait $session_bg &&
	watch_stop &&
	test_grep "^total over [0-9.]* s: xid: 2 writes" wt.txt &&
	test_grep "^ignored: 3 writes by processes outside the target" wt.txt &&
	test_grep "^hint: -p counts only the processes given" wt.txt.err
'

test_expect_success 'pgbench -c 2 -t 40: one XID per transaction, 40 per connection' '
	pg_bench -i -q -s 1 >/dev/null 2>&1 &&
	watch_start wb.json xid --pg="$PGDATA" -j --by pid -i 0 &&
	pg_bench -n -c 2 -j 2 -t 40 >bench.out 2>&1 &&
	watch_stop &&
	n=$(sed -n "s/^number of transactions actually processed: \([0-9]*\).*/\1/p" bench.out) &&
	json_py "
assert $n == 80, $n
assert d[\"total\"] == $n, d
assert sorted(p[\"writes\"] for p in d[\"processes\"]) == [40, 40], d
assert {p[\"type\"] for p in d[\"processes\"]} == {\"client backend\"}, d
" <wb.json
'

test_expect_success 'read-only transactions (select 1, checkpoint) write nothing' '
	watch_start w3.json xid --pg="$PGDATA" -j -i 0 &&
	for i in $(seq 1 20); do echo "select 1;"; done | psql -XAtq -f - >/dev/null &&
	pg_sql "checkpoint" &&
	watch_stop &&
	json_py "
assert d[\"total\"] == 0 and d[\"processes\"] == [], d
assert d[\"value\"] == d[\"value_start\"], d
" <w3.json
'

test_expect_success '--mode poll: the total is the counter difference over the run' '
	watch_start w4.json xid --pg="$PGDATA" -j --mode poll -i 0.2 &&
	xid_calls 25 >txids4 &&
	watch_stop &&
	json_py "
t = [int(x) for x in open(\"txids4\")]
assert d[\"mode\"] == \"poll\" and d[\"processes\"] == [], d
# nothing else assigns XIDs: the run saw exactly these 25 calls
assert d[\"value_start\"] == t[0] and d[\"value\"] == t[-1] + 1, (d, t)
assert d[\"total\"] == d[\"value\"] - d[\"value_start\"] == 25, d
iv = [l for l in lines if l[\"report\"] == \"interval\"]
assert sum(l[\"writes\"] for l in iv) == 25, iv
" <w4.json
'

test_expect_success '--by user -i: every interval split by role, adding up to the XIDs it got' '
	pg_sql "create role r2 login" &&
	watch_start wu.json xid --pg="$PGDATA" -j --by user -i 0.1 &&
	PGUSER=r2 xid_calls 7 >txidsu &&
	xid_calls 4 >/dev/null &&
	watch_stop &&
	json_py "
assert len(open(\"txidsu\").read().split()) == 7
s = d
assert s[\"users\"] == [{\"user\": \"postgres\", \"writes\": 4}, {\"user\": \"r2\", \"writes\": 7}] or \
       s[\"users\"] == [{\"user\": \"r2\", \"writes\": 7}, {\"user\": \"postgres\", \"writes\": 4}], s
assert s[\"users\"][0][\"user\"] == \"r2\", s     # most writes first
iv = [l for l in lines if l[\"report\"] == \"interval\"]
assert sum(u[\"writes\"] for l in iv for u in l[\"users\"] if u[\"user\"] == \"r2\") == 7, iv
assert sum(l[\"writes\"] for l in iv) == s[\"total\"] == 11, (iv, s)
" <wu.json
'

test_expect_success 'text output: header, interval lines and the summary' '
	watch_start w5.txt xid --pg="$PGDATA" --by pid -i 0.2 &&
	xid_calls 3 pid5 >/dev/null &&
	sleep 0.3 &&
	watch_stop &&
	test_grep "TIME *WRITES *RATE/s *VALUE" w5.txt &&
	test_grep "^total over [0-9.]* s: xid: 3 writes (" w5.txt &&
	test_grep "^ *[0-9]*\\.[0-9][0-9][0-9]  *[0-9]* *[0-9.]*  [0-9]*$" w5.txt &&
	test_grep "$(cat pid5) client backend  *3$" w5.txt
'

test_done
