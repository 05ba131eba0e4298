#!/bin/bash
test_description='dbtap latency: probe pairs on a workload, latency query on a cluster'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

W=$WORKLOADS/funcloop
[ -x "$W" ] || test_bail "$W is not built: run make"

test_expect_success 'uprobe -> uretprobe of a sleeping function: every call, none shorter than the sleep' '
	funcloop_start loop1.out -s 3000 40 &&
	trace_start l1.json latency -p $LOOP_PID -j --hist linear:0:10000:1000 \
		uprobe:$W:funcloop_work uretprobe:$W:funcloop_work &&
	kill -USR1 $LOOP_PID && funcloop_wait && trace_wait &&
	test_grep "^calls 40 " loop1.out &&
	json_py "
p = d[\"pairs\"][0]
assert p[\"count\"] == 40 and p[\"unmatched_ends\"] == 0, p
# usleep(3000) lasts at least 3 ms: nothing below the 3000 us bucket
assert all(h[\"low_us\"] >= 3000 for h in p[\"hist\"]), p[\"hist\"]
assert sum(h[\"count\"] for h in p[\"hist\"]) == 40, p[\"hist\"]
assert p[\"p50_us\"] >= 3000 * (1 - 1/64), p
assert d[\"pending\"] == 0, d
" <l1.json
'

test_expect_success 'USDT -> uprobe pair, and an END without START is counted as unmatched' '
	funcloop_start loop2.out 300 &&
	trace_start l2.json latency -p $LOOP_PID -j usdt:funcloop:tick uprobe:$W:funcloop_work &&
	kill -USR1 $LOOP_PID && funcloop_wait && trace_wait &&
	json_py "
p = d[\"pairs\"][0]
# work(0) runs before the first tick: one END without a START
assert p[\"count\"] == 299 and p[\"unmatched_ends\"] == 1, p
" <l2.json
'

test_expect_success 'bad input: START without END, wildcard START, too many pairs' '
	test_expect_code 2 dbtap latency uprobe:$W:funcloop_work 2>e1 &&
	test_grep "^error: START '"'uprobe:$W:funcloop_work'"' has no END" e1 &&
	test_grep "^hint: give probes in pairs" e1 &&
	test_expect_code 2 dbtap latency "uprobe:$W:funcloop_*" uretprobe:$W:funcloop_work 2>e2 &&
	test_grep "matches 2 probes; START and END name one probe each" e2 &&
	test_expect_code 2 dbtap latency 2>e3 && test_grep "^hint: " e3 &&
	test_expect_code 2 dbtap latency -p $$ query extra 2>e4 && test_grep "after '"'query'"'" e4
'

test_expect_success 'set up a cluster' '
	pg_start pg "autovacuum = off"
'

test_expect_success 'latency query: successful statements counted, literals hidden, errors leave no entry' '
	{ echo "select pg_backend_pid();" &&
	  for i in 1 2 3 4 5; do echo "select $i, '"'secret-$i'"';"; done &&
	  for i in 1 2 3; do echo "select 1/0;"; done &&
	  echo "select pg_sleep(0.3);" &&
	  echo "select 42;"; } >q.sql &&
	trace_start l3.json latency --pg="$PGDATA" -j query &&
	psql -XAt -f q.sql >q.out 2>q.err;
	trace_stop &&
	test "$(grep -c "division by zero" q.err)" = 3 &&
	pid=$(sed -n 1p q.out) &&
	json_py "
pid = $pid
p = d[\"pairs\"][0]
# 1 + 5 + sleep + 42 succeed; the 3 failing statements have no query__done
assert p[\"count\"] == 8, p
assert d[\"pending\"] == 0, d
top = {t[\"query\"]: t[\"count\"] for t in d[\"statements\"]}
assert top == {\"select pg_backend_pid();\": 1, \"select \$1, \$2;\": 5,
               \"select pg_sleep(\$1);\": 1, \"select \$1;\": 1}, top
assert not any(\"secret\" in q for q in top), top
assert d[\"statements\"][0][\"query\"] == \"select pg_sleep(\$1);\", d[\"statements\"]
me = [x for x in d[\"processes\"] if x[\"pid\"] == pid]
assert len(me) == 1 and me[0][\"count\"] == 8, d[\"processes\"]
assert me[0][\"type\"] == \"client backend\" and me[0][\"database\"] == \"postgres\", me
assert d[\"statements_count\"] == 4 and d[\"report\"] == \"summary\", d
" <l3.json
'

test_expect_success 'an errored statement does not pair with the next statement (no poisoning)' '
	{ echo "select 1/0;" && echo "\\! sleep 0.4" && echo "select 7;"; } >p.sql &&
	trace_start l4.json latency --pg="$PGDATA" -j query &&
	psql -XAt -f p.sql >p.out 2>p.err;
	trace_stop &&
	json_py "
p = d[\"pairs\"][0]
assert p[\"count\"] == 1, p
# select 7 pairs with its own start, not with the failed statement 0.4 s earlier
assert p[\"max_us\"] < 400000, p
assert d[\"statements\"][0][\"count\"] == 1, d
" <l4.json
'

test_expect_success 'a backend that ends on an error keeps one pending start, not one per error' '
	trace_start l5.json latency --pg="$PGDATA" -j -i 0.2 query &&
	for i in $(seq 1 20); do echo "select 1/0;"; done | psql -XAt -f - >/dev/null 2>&1;
	trace_stop &&
	json_py "assert d[\"pending\"] == 1 and d[\"pairs\"][0][\"count\"] == 0, d" <l5.json
'

# standard_conforming_strings off: 'secret\' is no string end; on: C:\tmp\ is one string.
# (\047 is a quote: the SQL cannot sit inside the quoted test body as it is)
test_expect_success 'standard_conforming_strings off: a backslash hides no literal from redaction' '
	printf "%s\n" "set standard_conforming_strings = off;" \
		"select \047secret\\\\\047 password=hunter2 \047 as v;" \
		"select \047C:\\\\\\\\tmp\\\\\\\\\047 as path, \047x\047 as y;" \
		"set standard_conforming_strings = on;" \
		"select \047C:\\\\tmp\\\\\047 as path2, \047pw=hunter3\047 as z;" >scs.fmt &&
	printf "$(cat scs.fmt)\n" >scs.sql &&
	cat scs.sql &&
	trace_start l7.json latency --pg="$PGDATA" -j query &&
	psql -XAt -v ON_ERROR_STOP=1 -f scs.sql >scs.out 2>scs.err &&
	trace_stop &&
	cat scs.out &&
	test_grep "password=hunter2" scs.out &&
	test_grep "^C:.tmp.|x$" scs.out &&
	json_py "
top = [t[\"query\"] for t in d[\"statements\"]]
for q in top:
    for secret in (\"secret\", \"hunter\", \"tmp\", \"pw=\"):
        assert secret not in q, (secret, top)
assert \"select \$1\" in top, top
# the two sets and the three selects, each counted
assert sum(t[\"count\"] for t in d[\"statements\"]) == 5, d[\"statements\"]
" <l7.json
'

test_expect_success '--raw-query shows the statement as sent' '
	trace_start l6.json latency --pg="$PGDATA" -j --raw-query query &&
	pg_sql "select '"'visible-literal'"'" >/dev/null &&
	trace_stop &&
	json_py "
top = [t[\"query\"] for t in d[\"statements\"]]
assert \"select '"'visible-literal'"'\" in top, top
" <l6.json
'

test_expect_success '--top 1 --sort total|mean|count keeps the statement that leads by that key' '
	{ for i in $(seq 1 20); do echo "select $i;"; done &&
	  echo "select pg_sleep(0.2);" &&
	  for i in 1 2 3 4 5; do echo "select pg_sleep(0.05), $i;"; done; } >s.sql &&
	for k in total mean count; do
		trace_start s-$k.json latency --pg="$PGDATA" -j query --top 1 --sort $k &&
		psql -XAtq -f s.sql >/dev/null &&
		trace_stop || return 1
	done &&
	json_py "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select pg_sleep(\$1), \$2;\", 5)], d" <s-total.json &&
	json_py "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select pg_sleep(\$1);\", 1)], d" <s-mean.json &&
	json_py "assert [(t[\"query\"], t[\"count\"]) for t in d[\"statements\"]] == [(\"select \$1;\", 20)], d" <s-count.json &&
	test_expect_code 2 dbtap latency --pg="$PGDATA" query --sort slowest 2>e5 &&
	test_grep "bad --sort '"'slowest'"'" e5 && test_grep "^hint: " e5
'

test_expect_success '--by database -i: every interval split, adding up to the statements psql sent' '
	pg_sql "create database d2" &&
	trace_start b1.json latency --pg="$PGDATA" -j -i 0.1 --by database query &&
	psql -XAtq -d d2 -f s.sql >/dev/null &&
	trace_stop &&
	json_py "
iv = [l for l in lines if l[\"report\"] == \"interval\"]
n = sum(x[\"count\"] for l in iv for x in l[\"databases\"] if x[\"database\"] == \"d2\")
assert n == 26, n          # 20 + 1 + 5 statements, all in d2
assert [x[\"count\"] for x in d[\"databases\"] if x[\"database\"] == \"d2\"] == [26], d
assert sum(x[\"count\"] for x in d[\"processes\"] if x[\"database\"] == \"d2\") == 26, d
" <b1.json
'

test_done
