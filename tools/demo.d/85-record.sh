#!/bin/bash
# dbtap record on the demo cluster: a slowdown made on purpose, captured by itself.
echo "The flight recorder keeps the last seconds of samples and markers in fixed memory"
echo "and writes them out when a trigger holds. Here: 'p99>300ms for 1s' on transaction"
echo "latency or 'cpu>50% for 2s', then four clients start a CPU-heavy statement for 4 seconds."
out="$(dirname "$DBTAP")/build/demo-record"
rm -rf "$out"
"$DBTAP" record --pg "$PGDATA" --keep 10s --post 2s --trigger 'p99>300ms for 1s' --trigger 'cpu>50% for 2s' -o "$out" -d 14 &
rec=$!
sleep 4
for i in 1 2 3 4; do
	(
		end=$(($(date +%s) + 4))
		while [ "$(date +%s)" -lt "$end" ]; do
			psql -XAtq -c "SET work_mem = '256MB'" \
				-c "SELECT count(*) FROM generate_series(1, 2000000) g WHERE g % 7 = 3" >/dev/null
		done
	) &
done
wait $rec
echo
for d in "$out"/*/; do
	[ -f "$d/summary.txt" ] && cat "$d/summary.txt" && echo "(and $(cd "$d" && ls | grep -v summary | tr '\n' ' ') in $d)"
done
wait
