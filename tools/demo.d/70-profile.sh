#!/bin/bash
# dbtap profile on the demo cluster's pgbench load: where its CPU time goes, by stack.
echo "Stacks of every process of the cluster while they run on a CPU, sampled 99 times a"
echo "second per CPU by a BPF program on a cpu-clock event, counted in the kernel. The"
echo "server is stripped: names come from its .dynsym, the kernel's from /proc/kallsyms."
echo "Each backend type gets the functions where its time goes, by self and total share."
"$DBTAP" profile --pg "$PGDATA" -d 5 --top 8 -o "$ROOT/build/demo-profile.svg"
echo
echo "The same seconds as an interactive flame graph written by dbtap (hover a frame, click"
echo "to zoom, search): $ROOT/build/demo-profile.svg"
