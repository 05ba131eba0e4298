#!/bin/bash
# dbtap stat: counters per statement, read in the kernel at PostgreSQL's USDT probes.
echo "Per-CPU counters are read at query__start and query__done and at every context"
echo "switch of a backend, so each statement gets its own task-clock and page faults,"
echo "the CPUs it ran on and its migrations. Hardware events (instructions, cycles) need"
echo "a PMU: where the machine has none they are reported as not supported, never as 0."
echo "First the whole cluster for 2 s, perf stat style; then 3 s per query, top 4:"
"$DBTAP" stat --pg="$PGDATA" -d 2 -e task-clock,context-switches,cpu-migrations,page-faults,instructions
"$DBTAP" stat --pg="$PGDATA" --by query -d 3 --top 4 -e task-clock,page-faults,instructions,cpu-migrations
