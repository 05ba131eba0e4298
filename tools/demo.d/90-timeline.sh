#!/bin/bash
# dbtap profile --timeline on the demo cluster's pgbench load: the demo's last picture.
out="$(dirname "$DBTAP")/build"
echo "Every sample with its time and thread, and each backend's transactions from the"
echo "server's USDT probes: one row per backend over 3 seconds, a cell's shade the share"
echo "of that slice it spent on CPU, '-' where a transaction was open. The same run is"
echo "drawn (hover a tick for its stack) and written for the Firefox Profiler"
echo "(profiler.firefox.com, Perfetto's UI) in:"
echo "  $out/demo-timeline.svg"
echo "  $out/demo-timeline.json.gz"
"$DBTAP" profile --timeline --pg "$PGDATA" -d 3 --top 8 -o "$out/demo-timeline.svg"
"$DBTAP" profile --timeline --pg "$PGDATA" -d 3 -o "$out/demo-timeline.json.gz" >/dev/null
