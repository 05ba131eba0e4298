#!/bin/bash
# dbtap bench: what one probe hit costs on this machine, measured in a few seconds.
echo "A child process calls functions with known first instructions (nop, push %rbp,"
echo "5-byte nop, a store, USDT sites) in a loop and counts its calls; each mechanism is"
echo "attached with dbtap's counting handler and with an empty BPF program (the floor)."
echo "'count check' is the handler's count against the workload's own: they must match."
echo "A quick run (0.1 s per row; the full run is 'dbtap bench', docs/bench.md):"
"$DBTAP" bench --quick baseline syscall uprobe-nop uprobe-nop5 usdt watchpoint
