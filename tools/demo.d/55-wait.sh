#!/bin/bash
# dbtap wait: where the pgbench backends' time goes, in seconds, by wait event and statement.
echo "A program at the scheduler's context switch reads each backend's wait event as it"
echo "leaves the CPU and adds the time until it comes back: CPU, each wait event, and off"
echo "CPU with no wait event set add up to every backend's wall time. Idle (ClientRead"
echo "outside a transaction) is apart. First 3 s by wait event, then 3 s by statement:"
"$DBTAP" wait --pg="$PGDATA" -d 3 --top 10
"$DBTAP" wait --pg="$PGDATA" -d 3 --by query --top 8
