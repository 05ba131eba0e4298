#!/bin/bash
# bench/stat-rss.sh: peak resident memory of `dbtap stat --by query` with the statement
# map full (4,096 distinct statement shapes), on a throwaway cluster.
#
# Each shape `select $i as dbtap_rss_N` normalizes to a statement of its own; every shape
# runs REPEAT times (default 3) with different literals, so its histograms hold several
# buckets. dbtap runs with -i 1 (interval reports keep the previous table too) until the
# statements have run, then gets Ctrl-C and prints its final report. Its peak RSS comes
# from the kernel's accounting of the reaped child (wait4's ru_maxrss, VmHWM at exit).
# Prints: shapes run, statements dbtap reported, dropped ones, peak RSS in MB.
# Needs root and a built tree (make).

. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init stat-rss "BPF programs and per-CPU counters"

SHAPES=${SHAPES:-4200}
REPEAT=${REPEAT:-3}

pg_start pg "autovacuum = off" >/dev/null || exit 1
python3 - "$SHAPES" "$REPEAT" >"$TRASH/load.sql" <<'PY'
import sys
shapes, repeat = int(sys.argv[1]), int(sys.argv[2])
for r in range(repeat):
    for i in range(shapes):
        print(f"select {i * 7 + r} as dbtap_rss_{i};")
PY

# dbtap under a python parent that reaps it with wait4 and prints its ru_maxrss
python3 - "$DBTAP" "$TRASH" "$PGDATA" <<'PY' &
import os, subprocess, sys
dbtap, trash, pgdata = sys.argv[1:4]
with open(f"{trash}/stat.json", "w") as out, open(f"{trash}/stat.err", "w") as err:
    p = subprocess.Popen([dbtap, "-j", "stat", "--by", "query", "-e", "task-clock,page-faults",
                          "-i", "1", "--pg", pgdata], stdout=out, stderr=err)
    with open(f"{trash}/stat.pid", "w") as f:
        f.write(str(p.pid))
    _, status, ru = os.wait4(p.pid, 0)
with open(f"{trash}/rss", "w") as f:
    f.write(f"{ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}\n")
PY
wrapper=$!
for i in $(seq 1 400); do
	grep -q '^counting' "$TRASH/stat.err" 2>/dev/null && break
	sleep 0.05
done
grep -q '^counting' "$TRASH/stat.err" || { cat "$TRASH/stat.err" >&2; exit 1; }
psql -XAtq -f "$TRASH/load.sql" >/dev/null || exit 1
sleep 2.5 # two interval reports with the map full
kill -INT "$(cat "$TRASH/stat.pid")"
wait $wrapper
read -r kb rc <"$TRASH/rss"
python3 - "$TRASH/stat.json" "$kb" "$rc" "$SHAPES" "$REPEAT" <<'PY'
import json, sys
path, kb, rc, shapes, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
lines = [json.loads(l) for l in open(path) if l.strip()]
summ = [l for l in lines if l.get("report") == "summary"]
s = summ[-1] if summ else {}
print(f"shapes run:           {shapes} x {repeat}")
print(f"statements reported:  {len(s.get('statements', []))}")
print(f"dropped:              {s.get('dropped')}")
print(f"dbtap exit status:    {rc}")
print(f"peak RSS (VmHWM):     {kb / 1024:.1f} MB")
PY
