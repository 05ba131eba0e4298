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
# shares are taken over the same backends, idle included on both sides (pg_stat_activity
# shows ClientRead between transactions too). A backend waiting in pg_stat_activity's
# eyes is counted there even on CPU, so the shares are compared, not the seconds.
# A sample is taken when the sampler gets a CPU: on a machine whose CPUs are all busy,
# that is mostly when another task blocks, often a pgbench backend going into a wait,
# and a psql loop needs five wakeups per sample. Such samples see backends on CPU half
# far less often than they are (ClientRead was 42 % of the samples, 29 % of the time). So the
# sampler is one statement looping in its backend, which runs at a real-time priority
# and takes its sample when its timer fires; and dbtap traces only while it samples.
test_expect_success 'mixed pgbench run: top wait event shares within 10 points of the samples' '
	psql -XAtq -c "create function sample(n int) returns table(pid int, t text, e text)
language plpgsql as \$\$
begin
	for i in 1..n loop
		perform pg_stat_clear_snapshot();
		return query select a.pid, coalesce(a.wait_event_type, '"'-'"')::text,
			coalesce(a.wait_event, '"'-'"')::text from pg_stat_activity a
			where a.application_name = '"'pgbench'"' and a.state is not null;
		perform pg_sleep(0.02);
	end loop;
end \$\$" &&
	{ echo "select pg_backend_pid() as pid \\gset" &&
	  echo "\\setenv SAMPLER :pid" &&
	  echo "\\! chrt -f -p 10 \$SAMPLER && touch rt.ok" &&
	  echo "select * from sample(250);"; } >sample.sql &&
	{ pgbench -c 6 -j 2 -T 60 -n >bench.out 2>&1 & bench=$!; } &&
	test_when_finished "kill $bench 2>/dev/null; wait $bench 2>/dev/null; true" &&
	sleep 1 &&
	trace_start w1.json wait --pg="$PGDATA" -j --by pid --top 1000 --include-idle &&
	psql -XAtq -F " " -f sample.sql >samples.txt &&
	trace_stop &&
	test -f rt.ok &&
	kill -0 $bench &&
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
