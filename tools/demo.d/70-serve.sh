#!/bin/bash
# dbtap serve: one scrape of /metrics, as Prometheus would make it.
echo "The same figures for Prometheus: dbtap serve attaches once, keeps the kernel's"
echo "aggregates, and reads the maps at each scrape. One scrape, two seconds after start"
echo "(transactions by database/user/backend type, the transaction latency histogram,"
echo "the heaviest statements, XIDs and the wraparound horizon, dbtap's own health):"
"$DBTAP" serve --pg "$PGDATA" --listen 127.0.0.1:0 -d 4 2>"$TRASH/serve.err" &
serve=$!
for i in $(seq 1 100); do
	addr=$(sed -n 's|^serving http://\(.*\)/metrics.*|\1|p' "$TRASH/serve.err")
	[ -n "$addr" ] && break
	sleep 0.05
done
sleep 2
if [ -n "$addr" ] && curl -sf "http://$addr/metrics" >"$TRASH/metrics.txt"; then
	echo "\$ curl -s http://$addr/metrics   ($(grep -vc '^#' "$TRASH/metrics.txt") samples; some of them:)"
	grep -E '^dbtap_(transactions_total|transaction_duration_seconds_(bucket\{.*le="0.00[0-9]*"|count|sum)|statement_seconds_count|xids_assigned_total|xid_wraparound_horizon_seconds|bpf_run_seconds_total|scrape_duration_seconds)' \
		"$TRASH/metrics.txt" | sed 's/cluster="[^"]*"/cluster="..."/' | cut -c1-160 | head -24
else
	cat "$TRASH/serve.err"
fi
wait $serve
