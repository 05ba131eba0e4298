#!/bin/bash
# dbtap watch: hardware watchpoints on the XID and OID counters of the demo cluster.
echo "A hardware watchpoint on ShmemVariableCache->nextXid, one per CPU, counts each XID"
echo "handed out and which backend got it (pgbench's write transactions, about 200/s)."
echo "The BPF program keeps only this cluster's processes; no restart, no debug info."
"$DBTAP" watch xid --pg "$PGDATA" --by pid --top 4 -i 1 -d 3

echo
echo "nextOid: which backend consumes OIDs. A psql session creates temporary tables"
echo "meanwhile: three OIDs each (table, row type, array type), and two more when the"
echo "cluster creates that backend slot's temporary schemas (once, on first use)."
( sleep 0.5; for i in 1 2 3 4 5; do echo "create temp table demo_t$i (x int);"; done |
	psql -XAtq -f - >/dev/null ) &
"$DBTAP" watch oid --pg "$PGDATA" --by pid -i 1 -d 2
wait

echo
echo "The same rate without any trap: --mode poll reads the counter every interval"
echo "(exact totals, no attribution, nothing for the server to pay)."
"$DBTAP" watch xid --pg "$PGDATA" --mode poll -i 1 -d 2
