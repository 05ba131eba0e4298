#!/bin/bash
test_description='dbtap watch --pg: another cluster writing the same address is not counted'
# Without address-space randomization (inherited by every process this file starts)
# two clusters map their shared memory, and the XID counter, at the same address:
# the breakpoint fires for both, and only the BPF filter tells them apart.
if [ -z "$DBTAP_WATCH_NO_ASLR" ]; then
	export DBTAP_WATCH_NO_ASLR=1
	exec setarch "$(uname -m)" -R "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$@"
fi
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

test_expect_success 'two clusters, the counter at the same address in both' '
	pg_start a "autovacuum = off" &&
	pg_start b "autovacuum = off" &&
	dbtap watch xid --pg="$TRASH/a/data" --mode poll -d 0.1 -i 0 -j >a.json &&
	dbtap watch xid --pg="$TRASH/b/data" --mode poll -d 0.1 -i 0 -j >b.json &&
	json_py "
import json
a, b = json.load(open(\"a.json\")), json.load(open(\"b.json\"))
assert a[\"address\"] == b[\"address\"], (a[\"address\"], b[\"address\"])
" </dev/null
'

test_expect_success 'watching cluster a: its writes counted, cluster b'"'"'s ignored' '
	watch_start w.json xid --pg="$TRASH/a/data" -j --by pid -i 0 &&
	{ (pg_use a && xid_calls 25 pida >/dev/null) & x=$!; } &&
	{ (pg_use b && xid_calls 40 pidb >/dev/null) & y=$!; } &&
	wait $x && wait $y &&
	watch_stop &&
	json_py "
s = d
assert s[\"total\"] == 25, s
assert s[\"processes\"] == [{\"pid\": $(cat pida), \"type\": \"client backend\", \"user\": \"postgres\", \"database\": \"postgres\", \"writes\": 25}], s
assert s[\"ignored\"] == 40, s
" <w.json
'

test_done
