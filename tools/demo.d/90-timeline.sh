#!/bin/bash
# dbtap profile --timeline on the demo cluster's pgbench load: the demo's last picture.
echo "Every sample with its time and thread, and each backend's transactions from the"
echo "server's USDT probes: one row per backend over 3 seconds, a cell's shade the share"
echo "of that slice it spent on CPU, '-' where a transaction was open. The same run is"
echo "drawn in $ROOT/build/demo-timeline.svg (hover a tick for its stack) and written for the"
echo "Firefox Profiler in $ROOT/build/demo-timeline.json.gz (profiler.firefox.com, Perfetto's UI)."
"$DBTAP" profile --timeline --pg "$PGDATA" -d 3 --top 8 -o "$ROOT/build/demo-timeline.svg"
"$DBTAP" profile --timeline --pg "$PGDATA" -d 3 -o "$ROOT/build/demo-timeline.json.gz" >/dev/null
