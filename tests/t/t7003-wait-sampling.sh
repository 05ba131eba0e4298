#!/bin/bash
test_description='dbtap wait: the shares of the top wait events agree with pg_stat_activity sampled at 50 Hz'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/trace.sh

test_expect_success 'set up a cluster and pgbench tables' '
	pg_start pg "autovacuum = off" &&
	pgbench -i -s 1 -q >init.log 2>&1
'

# The sampler is a backend too: it samples the pgbench backends only, and dbtap's
# shares are taken over the same backends. A backend waiting in pg_stat_activity's
# eyes is counted there even on CPU, so the shares are compared, not the seconds.
# Known breakage: on a quiet machine ClientRead was 42.1 % of pg_stat_activity's samples
# and 28.6 % of dbtap's time; the cause is not found yet.
test_expect_failure 'mixed pgbench run: top wait event shares within 10 points of the samples' '
	{ for i in $(seq 1 250); do
		echo "select pid, coalesce(wait_event_type, '"'-'"'), coalesce(wait_event, '"'-'"') from pg_stat_activity where application_name = '"'pgbench'"' and state is not null;"
		echo "select pg_sleep(0.02);"
	  done; } >sample.sql &&
	trace_start w1.json wait --pg="$PGDATA" -j --by pid --top 1000 --include-idle &&
	{ pgbench -c 6 -j 2 -T 7 -n >bench.out 2>&1 & bench=$!; } &&
	sleep 1 &&
	psql -XAtq -F " " -f sample.sql >samples.txt &&
	wait $bench &&
	trace_stop &&
	test "$(grep -c . samples.txt)" -gt 500 &&
	json_py "
import collections
samples = collections.Counter()
pids = set()
for line in open(\"samples.txt\"):
    if not line.split():
        continue
    pid, t, e = line.split()
    pids.add(int(pid))
    samples[(t, e)] += 1
n = sum(samples.values())
procs = {g[\"pid\"]: g for g in d[\"processes\"]}
assert pids and pids <= set(procs), (pids, set(procs))
ours = collections.Counter()
total = 0
for pid in pids:
    total += procs[pid][\"wall_ns\"]
    for w in procs[pid][\"waits\"]:
        if w[\"wait_event_type\"]:
            ours[(w[\"wait_event_type\"], w[\"wait_event\"])] += w[\"wait_ns\"]
top = [k for k, _ in samples.most_common() if k != (\"-\", \"-\")][:3]
assert top, samples
for k in top:
    s, o = 100.0 * samples[k] / n, 100.0 * ours[k] / total
    print(k, round(s, 1), round(o, 1))
    assert abs(s - o) <= 10, (k, s, o, samples.most_common(6), ours.most_common(6))
" <w1.json
'

test_done
