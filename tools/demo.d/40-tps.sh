#!/bin/bash
# dbtap tps / latency / count on the demo cluster's pgbench load.
echo "Transactions per second from PostgreSQL's own USDT probes (transaction__start,"
echo "__commit, __abort), counted in the kernel for every process of the cluster:"
echo "per connection TPS, transaction time (start -> commit) and cycle time (start ->"
echo "next start: what pgbench calls latency), and a SystemTap-style histogram."
"$DBTAP" tps --pg "$PGDATA" --by pid --hist linear:0:2000:100 -d 3

echo
echo "Statement latency (query__start -> query__done) and the statements with the most"
echo "total time; literals are shown as \$n since raw statements can carry secrets."
"$DBTAP" latency --pg "$PGDATA" query -d 2 --top 5

echo
echo "How often the planner's bitmapset membership test runs (the funccount example),"
echo "by backend type:"
"$DBTAP" count --pg "$PGDATA" uprobe:postgres:bms_is_member --by type -d 2
