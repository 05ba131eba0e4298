#!/bin/bash
test_description='dbtap tps: transactions per backend against pgbench, pg_stat_* and psql'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pgcopy.sh # semaphores are read from the server: its own binary
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/bpfobj.sh

# Connections to database bench so far (pg_stat_database.sessions, PostgreSQL 14+).
sessions() {
	psql -XAtq -d postgres -c "select sessions from pg_stat_database where datname = 'bench'"
}

# Backends of bench exit after their client does: wait until they are all gone, so
# their session counts are flushed.
bench_gone() {
	local i
	for i in $(seq 1 100); do
		[ "$(psql -XAtq -d postgres -c "select count(*) from pg_stat_activity where datname = 'bench'")" = 0 ] && return 0
		sleep 0.05
	done
	return 1
}

# No autovacuum: pgbench and the tests' psql are then the only ones running transactions.
test_expect_success 'set up a cluster, a bench database, a one-statement script' '
	pg_start pg "autovacuum = off" &&
	pg_sql "create database bench" &&
	echo "select 1;" >one.sql
'

# Built and run on one kernel: the relocations of every test in this file use the
# minimal BTF cut at build time, so the exact counts below also check it.
test_expect_success 'CO-RE uses the built-in minimal BTF on the kernel it was built on' '
	dbtap -v tps --pg="$PGDATA" -d 0.2 >/dev/null 2>v.err &&
	test_grep "CO-RE against the built-in minimal BTF" v.err &&
	test_must_fail grep -q "loading kernel BTF" v.err
'

test_expect_success 'pgbench -c 3 -t 2000: commits = processed + one start-up transaction per connection' '
	s0=$(sessions) &&
	trace_start tps1.json tps --pg="$PGDATA" -j -i 0.1 --by pid &&
	pgbench -n -f one.sql -c 3 -t 2000 bench >bench1.out 2>&1 &&
	bench_gone &&
	trace_stop &&
	s1=$(sessions) &&
	processed=$(sed -n "s/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p" bench1.out) &&
	test "$processed" = 6000 &&
	json_py "
conns = $s1 - $s0
processed = $processed
s = d
assert s[\"report\"] == \"summary\" and s[\"end\"] == \"interrupted\", s
bench = [p for p in s[\"processes\"] if p[\"database\"] == \"bench\"]
assert all(p[\"type\"] == \"client backend\" and p[\"user\"] == \"postgres\" for p in bench), bench
# pgbench opens one connection per client plus one of its own before the run
assert conns == 4 and len(bench) == conns, (conns, bench)
# every connection runs one transaction while it starts up (InitPostgres)
assert sum(p[\"commits\"] for p in bench) == processed + conns, bench
assert sorted(p[\"commits\"] for p in bench) == [1, 2001, 2001, 2001], bench
assert all(p[\"starts\"] == p[\"commits\"] and p[\"aborts\"] == 0 for p in bench), bench
assert s[\"aborts\"] == 0 and s[\"commits\"] >= processed + conns, s
" <tps1.json
'

test_expect_success 'pgbench -C (a connection per transaction): one start-up transaction each' '
	s0=$(sessions) &&
	trace_start tpsC.json tps --pg="$PGDATA" -j -i 0.2 &&
	pgbench -n -C -f one.sql -c 2 -t 60 bench >benchC.out 2>&1 &&
	bench_gone &&
	trace_stop &&
	s1=$(sessions) &&
	processed=$(sed -n "s/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p" benchC.out) &&
	test "$processed" = 120 &&
	json_py "
conns = $s1 - $s0
s = d
bench = [p for p in s[\"processes\"] if p[\"database\"] == \"bench\"]
assert conns == 121 and len(bench) == conns, (conns, len(bench))
assert sum(p[\"commits\"] for p in bench) == $processed + conns, bench
assert sorted(set(p[\"commits\"] for p in bench)) == [1, 2], bench
assert sum(l[\"commits\"] for l in lines[:-1]) == s[\"commits\"], lines
" <tpsC.json
'

test_expect_success 'the interval reports add up to the final totals' '
	json_py "
iv, s = lines[:-1], lines[-1]
assert len(iv) >= 2 and all(l[\"report\"] == \"interval\" for l in iv), len(iv)
# each interval splits its commits by process: over the run, the same as its totals
assert sum(p[\"commits\"] for l in iv for p in l[\"processes\"] if p[\"database\"] == \"bench\") == sum(p[\"commits\"] for p in s[\"processes\"] if p[\"database\"] == \"bench\"), iv
for k in (\"commits\", \"aborts\", \"starts\"):
    assert sum(l[k] for l in iv) == s[k], (k, [l[k] for l in iv], s[k])
assert sum(l[\"txn\"][\"count\"] for l in iv) == s[\"txn\"][\"count\"], s
assert sum(h[\"count\"] for h in s[\"hist\"]) == s[\"txn\"][\"count\"], s
" <tps1.json
'

test_expect_success 'mean cycle time agrees with pgbench latency average (within 40 %)' '
	trace_start tps2.json tps --pg="$PGDATA" -j --per-backend &&
	pgbench -n -f one.sql -c 2 -t 1000 bench >bench2.out 2>&1 &&
	bench_gone &&
	trace_stop &&
	lat=$(sed -n "s/^latency average = \([0-9.]*\) ms$/\1/p" bench2.out) &&
	json_py "
lat_us = float(\"$lat\") * 1000
bench = [p for p in d[\"processes\"] if p[\"database\"] == \"bench\" and p[\"cycles\"] > 100]
assert len(bench) == 2, bench
cyc = sum(p[\"cycle_mean_us\"] * p[\"cycles\"] for p in bench) / sum(p[\"cycles\"] for p in bench)
print(\"cycle mean %.1f us, pgbench latency average %.1f us, ratio %.3f\" % (cyc, lat_us, cyc / lat_us))
assert 0.6 < cyc / lat_us < 1.4, (cyc, lat_us)
" <tps2.json
'

test_expect_success 'pg_sleep(0.05) transactions: in the 50-55 ms bucket, p50 within 1/64 of them' '
	{ echo "select pg_backend_pid();" && echo "\\timing on" &&
	  for i in $(seq 1 20); do echo "select pg_sleep(0.05);"; done; } >sleep.sql &&
	trace_start tps3.json tps --pg="$PGDATA" -j --by pid --hist linear:0:100000:5000 &&
	psql -XAt -f sleep.sql >sleep.out &&
	trace_stop &&
	pid=$(sed -n 1p sleep.out) &&
	sed -n "s/^Time: \([0-9.]*\) ms.*/\1/p" sleep.out >client.ms &&
	json_py "
import statistics
pid = $pid
client = [float(x) for x in open(\"client.ms\")]
assert len(client) == 20, client
s = d
me = [p for p in s[\"processes\"] if p[\"pid\"] == pid]
assert len(me) == 1 and me[0][\"commits\"] == 22, me    # start-up + pid + 20 sleeps
assert s[\"commits\"] == 22, s
slow = sum(h[\"count\"] for h in s[\"hist\"] if h[\"low_us\"] >= 50000)
assert slow == 20, s[\"hist\"]
b = [h for h in s[\"hist\"] if h[\"low_us\"] == 50000]
assert b and b[0][\"high_us\"] == 55000, s[\"hist\"]
# 22 values, nearest rank 11: one of the sleeps. The server-side time lies between
# 50 ms and what the client saw (which adds the round trip).
p50 = s[\"txn\"][\"p50_us\"] / 1000
hi = statistics.median(client)
assert 50 * (1 - 1/64) <= p50 <= hi * (1 + 1/64), (p50, hi)
" <tps3.json
'

test_expect_success 'a backend connecting after start is counted; failing statements are aborts' '
	trace_start tps4.json tps --pg="$PGDATA" -j --by pid &&
	{ echo "select pg_backend_pid();" &&
	  for i in $(seq 1 10); do echo "select 1;"; done &&
	  for i in $(seq 1 7); do echo "select 1/0;"; done; } >mixed.sql &&
	psql -XAt -f mixed.sql >mixed.out 2>mixed.err;
	trace_stop &&
	pid=$(sed -n 1p mixed.out) &&
	errors=$(grep -c "division by zero" mixed.err) &&
	test "$errors" = 7 &&
	json_py "
pid = $pid
me = [p for p in d[\"processes\"] if p[\"pid\"] == pid]
assert len(me) == 1, d[\"processes\"]
me = me[0]
assert me[\"type\"] == \"client backend\" and me[\"database\"] == \"postgres\", me
assert me[\"commits\"] == 1 + 1 + 10, me      # start-up, pg_backend_pid, 10 x select 1
assert me[\"aborts\"] == $errors, me
assert d[\"aborts\"] == $errors, d
" <tps4.json
'

test_expect_success 'background processes appear with their type (autovacuum launcher)' '
	pg_sql "alter system set autovacuum = on" &&
	pg_sql "alter system set autovacuum_naptime = 1" &&
	pg_sql "select pg_reload_conf()" >/dev/null &&
	for i in $(seq 1 100); do
		launcher=$(pg_sql "select pid from pg_stat_activity where backend_type = '"'autovacuum launcher'"'") &&
		test -n "$launcher" && break
		sleep 0.05
	done &&
	trace_start tps5.json tps --pg="$PGDATA" -j -d 2.5 &&
	trace_wait &&
	json_py "
launcher = $launcher
me = [p for p in d[\"processes\"] if p[\"pid\"] == launcher]
assert len(me) == 1 and me[0][\"type\"] == \"autovacuum launcher\", d[\"processes\"]
assert me[0][\"commits\"] >= 1, me
" <tps5.json
'

test_expect_success 'processes of another cluster do not appear' '
	pg_start other "autovacuum = off" &&
	other_pm=$PG_PID &&
	pg_sql "create database bench" &&
	pg_use pg &&
	trace_start tps6.json tps --pg="$PGDATA" -j &&
	pg_use other &&
	pgbench -n -f one.sql -c 2 -t 50 bench >/dev/null 2>&1 &&
	pg_use pg &&
	pg_sql "select 1" >/dev/null &&
	trace_stop &&
	json_py "
import os
pids = [p[\"pid\"] for p in d[\"processes\"]]
def ppid(p):
    try:
        return int(open(\"/proc/%d/stat\" % p).read().rsplit(\")\", 1)[1].split()[1])
    except OSError:
        return None
assert all(ppid(p) in (None, $PG_PID) or p == $PG_PID for p in pids), pids
assert $other_pm not in pids, pids
assert d[\"commits\"] < 100, d     # the other cluster ran 100 + 3 start-ups
" <tps6.json
'

test_expect_success 'the cluster stopping mid-run: final report, a warning, exit 0' '
	pg_use other &&
	trace_start tps8.json tps --pg="$PGDATA" -j -i 0.2 &&
	pg_sql "select 1" >/dev/null &&
	pg_stop other &&
	trace_wait &&
	test_grep "exited; stopping" tps8.json.err &&
	json_py "
assert d[\"report\"] == \"summary\" and d[\"end\"] == \"target exited\", d
assert d[\"commits\"] >= 2, d
assert sum(l[\"commits\"] for l in lines[:-1]) == d[\"commits\"], lines
" <tps8.json &&
	pg_use pg
'

# Relative to the value before: a tracer elsewhere on the machine attached to the same
# binary for every process (pid -1) raises these semaphores in our server too.
# sema_values: the server's semaphores for $probes, one line.
sema_values() {
	local p
	for p in $probes; do
		usdt_semaphore $PG_PID $bin $p || return 1
	done | tr "\n" " "
}

# One attach and detach: the transaction probes' semaphores are raised while attached
# (query__start untouched), back after. The kernel raises a semaphore once per process
# however many tracers probe it, and every process mapping the binary counts: while a
# tracer of another test probes the same postgres, nothing can be seen. So a round runs
# only when they are 0 to begin with, and a round another tracer disturbed (the values
# moved by themselves) is tried again; a leak of ours fails every try.
sema_round() {
	local before during after want
	before=$(sema_values) || return 1
	case "$before" in "0 0 0 "*) ;; *) echo "busy: $before"; return 3 ;; esac
	trace_start tps7.json tps --pg="$PGDATA" -j || return 1
	during=$(sema_values) || return 1
	bpf_objs_of $TRACE_PID >objs.attached &&
	grep -q "^prog " objs.attached && grep -q "^link " objs.attached &&
	trace_stop TERM &&
	bpf_objs_gone objs.attached || return 1
	after=$(sema_values) || return 1
	want="1 1 1 $(echo $before | cut -d" " -f4) "
	echo "before: $before during: $during (want $want) after: $after"
	[ "$during" = "$want" ] && [ "$after" = "$before" ] && return 0
	return 3
}

# Outside a test body: whether a quiet round came at all decides between the test and
# a skip that says why.
bin=$(readlink /proc/$PG_PID/exe)
probes="transaction__start transaction__commit transaction__abort query__start"
for try in $(seq 1 40); do
	sema_round >>sema.log 2>&1 </dev/null
	sema_rc=$?
	test $sema_rc = 3 || break
	sleep 1
done
if [ "$sema_rc" = 3 ]; then
	test_skip 'USDT semaphores of the server: +1 while attached, back after' \
		"other tracers probed this postgres binary in each of 40 tries ($(grep -c . sema.log) logged)"
else
	test_expect_success 'USDT semaphores of the server: +1 while attached, back after (read from memory)' '
		cat sema.log &&
		test $sema_rc = 0 &&
		json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\"" <tps7.json
	'
fi

test_expect_success 'no transaction timed: times are null (JSON) and "-" (text), not 0' '
	ckpt=$(pg_sql "select pid from pg_stat_activity where backend_type = '"'checkpointer'"'") &&
	dbtap tps -p $ckpt -d 0.3 -j >idle.json 2>idle.err &&
	json_py "
assert d[\"commits\"] == 0 and d[\"txn\"][\"count\"] == 0, d
assert all(d[\"txn\"][k] is None for k in (\"mean_us\", \"p50_us\", \"p90_us\", \"p99_us\", \"max_us\")), d
assert d[\"cycle\"][\"count\"] == 0 and d[\"cycle\"][\"mean_us\"] is None, d
" <idle.json &&
	dbtap tps -p $ckpt -d 0.3 >idle.txt 2>/dev/null &&
	test_grep "no transaction timed" idle.txt &&
	test_grep "mean - ms over 0 cycles" idle.txt
'

test_expect_success 'text output: totals line and histogram bars' '
	dbtap tps --pg="$PGDATA" -d 1 --hist linear:0:1000:100 >text.out 2>text.err &&
	test_grep "^total over 1.0 s: tps " text.out &&
	test_must_fail grep -q "^ *[0-9]*\\.[0-9][0-9][0-9]  tps " text.out &&
	test_grep "transaction time (start -> commit/abort), microseconds:" text.out &&
	test_grep "cycle time (start -> next start" text.out
'

test_expect_success 'text output: every interval line starts with seconds since the start' '
	dbtap tps --pg="$PGDATA" -i 0.2 -d 1 >itext.out 2>/dev/null &&
	grep " tps " itext.out >ilines &&
	test "$(grep -c "^ *[0-9]*\.[0-9][0-9][0-9]  tps " ilines)" -ge 4 &&
	test "$(grep -c "^total over 1.0 s: tps " ilines)" = 1
'

# Autovacuum workers (on since the launcher test) would run transactions in bench too.
test_expect_success '--by database: each interval per database, adding up to pgbench and the sessions' '
	pg_sql "alter system set autovacuum = off" &&
	pg_sql "select pg_reload_conf()" >/dev/null &&
	s0=$(sessions) &&
	trace_start tpsdb.json tps --pg="$PGDATA" -j -i 0.1 --by database &&
	pgbench -n -f one.sql -c 2 -t 300 bench >benchdb.out 2>&1 &&
	bench_gone &&
	trace_stop &&
	s1=$(sessions) &&
	json_py "
conns = $s1 - $s0
iv = [l for l in lines if l[\"report\"] == \"interval\"]
assert all(\"processes\" not in l for l in iv), iv[0]
bench = sum(g[\"commits\"] for l in iv for g in l[\"databases\"] if g[\"database\"] == \"bench\")
assert conns == 3 and bench == 600 + conns, (conns, bench)
s = d
assert sum(g[\"commits\"] for g in s[\"databases\"] if g[\"database\"] == \"bench\") == bench, s
" <tpsdb.json
'

test_expect_success '-t TID: one backend, its transactions only (psql through a fifo)' '
	mkfifo in.fifo &&
	{ psql -XAt <in.fifo >tid.out 2>&1 & } &&
	psql_pid=$! &&
	exec 7>in.fifo &&
	echo "select pg_backend_pid();" >&7 &&
	for i in $(seq 1 100); do test -s tid.out && break; sleep 0.05; done &&
	be=$(sed -n 1p tid.out) &&
	trace_start tid.json tps -t "$be" -j &&
	for i in 1 2 3 4 5; do echo "select $i;" >&7; done &&
	echo "select pg_backend_pid();" >&7 &&
	for i in $(seq 1 100); do test "$(wc -l <tid.out)" -ge 7 && break; sleep 0.05; done &&
	trace_stop &&
	exec 7>&- &&
	wait $psql_pid &&
	json_py "
assert d[\"commits\"] == 6, d            # 5 x select i, pg_backend_pid
assert [p[\"pid\"] for p in d[\"processes\"]] == [$be], d[\"processes\"]
assert d[\"processes\"][0][\"type\"] == \"client backend\", d
" <tid.json
'

test_expect_success '--per-backend, the deprecated spelling of --by pid, still splits by process' '
	dbtap tps --pg="$PGDATA" -j -i 0.1 -d 0.3 --per-backend >pb.json 2>/dev/null &&
	json_py "assert all(\"processes\" in l for l in lines), lines" <pb.json
'

test_expect_success 'bad input: --hist, --by, a stray argument, an unknown cluster' '
	test_expect_code 2 dbtap tps --pg="$PGDATA" --hist linear:1:2 2>e1 &&
	test_grep "bad histogram '"'linear:1:2'"'" e1 && test_grep "^hint: " e1 &&
	test_expect_code 2 dbtap tps --pg="$PGDATA" --hist linear:0:100000:1 2>e2 &&
	test_grep "at most 254" e2 &&
	test_expect_code 2 dbtap tps --pg="$PGDATA" --by query 2>e3 &&
	test_grep "bad --by '"'query'"'" e3 && test_grep "^hint: --by pid|type|database|user" e3 &&
	test_expect_code 2 dbtap tps --pg="$PGDATA" extra 2>e4 && test_grep "unexpected argument '"'extra'"'" e4 &&
	test_must_fail dbtap tps --pg=/nonexistent/dir 2>e5 && test_grep "^hint: " e5
'

test_expect_success 'a user who cannot read the data directory: permission denied, not "no PG_VERSION"' '
	pg_use pg &&
	test "$(stat -c %a "$PGDATA")" = 700 &&
	test_expect_code 1 dbtap_as nobody tps --pg "$PGDATA" -d 0.2 >up.out 2>up.err &&
	test_grep "^error: cannot look into .*$(basename "$PGDATA").*: permission denied" up.err &&
	test_grep "^hint: .*run dbtap as root" up.err &&
	! grep -q "PG_VERSION" up.err &&
	test_must_be_empty up.out
'

test_expect_success '-p of the postmaster: no transaction, and the hint toward --pg' '
	pg_use pg &&
	trace_start pm.json tps -p $PG_PID -j &&
	pg_sql "select 1" >/dev/null &&
	trace_stop &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"commits\"] == 0, d" <pm.json &&
	test_grep "^warning: no transaction: pid $PG_PID is a postmaster" pm.json.err &&
	test_grep "^hint: -p counts only the processes given .*--pg $PG_PID" pm.json.err &&
	# a backend given with -p: its transactions, and no such hint
	trace_start be.json tps -p $(pg_sql "select pid from pg_stat_activity where backend_type = '"'checkpointer'"'") -j &&
	trace_stop &&
	! grep -q "is a postmaster" be.json.err
'

test_done
