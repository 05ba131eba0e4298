#!/bin/bash
# bench/probe-cost.sh: dbtap's counting handler against the empty BPF program (the
# floor) and against bpftrace counting the same site, measured side by side in one run.
#
#	bench/probe-cost.sh [REPEATS [SECS]]    default 5 repeats of 0.5 s per row
#
# Prints, per mechanism, the ns per hit of each and the two ratios the performance
# target is about: handler / empty (target: at most 1.05) and handler / bpftrace
# (target: at most 1.00), and "prog +%": what the handler program's own run time
# (BPF statistics) adds over the empty program's, in % of a hit. Ratios, never absolute figures: machines differ. Each ratio
# is the median of the per-repeat ratios of neighbouring runs, so machine drift
# between repeats cancels; on a busy machine use more, shorter repeats (21 0.1).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPEATS=${1:-5}
SECS=${2:-0.5}
BT=--vs-bpftrace
command -v bpftrace >/dev/null || { echo "bpftrace not installed: handler / empty only" >&2; BT=; }

"$ROOT/dbtap" bench -j -r "$REPEATS" -d "$SECS" $BT \
	uprobe-nop uprobe-push uprobe-nop5 uretprobe-nop usdt usdt-semaphore watchpoint |
python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
cfg = lines[0]
rows = {(r["mechanism"], r["program"]): r for r in lines if r["report"] == "row" and r["available"]}
print("dbtap bench, %d x %g s per row, Linux %s, %d cpus, %s" % (cfg["repeats"], cfg["run_s"],
      cfg["kernel"], cfg["cpus"], cfg["bpftrace"] or "no bpftrace"))
print("%-15s %9s %9s %9s %9s %14s %16s" % ("mechanism", "handler", "empty", "bpftrace",
      "prog +%", "handler/empty", "handler/bpftrace"))
worst_e = worst_b = worst_p = 0
for m in dict.fromkeys(k[0] for k in rows):
    h, e, b = (rows.get((m, p)) for p in ("handler", "empty", "bpftrace"))
    if not h:
        continue
    # medians of the per-repeat ratios (neighbouring runs), as dbtap bench computes them
    re = 1 + h["vs_empty_pct"] / 100 if h.get("vs_empty_pct") is not None else float("nan")
    rb = h["vs_bpftrace"] if h.get("vs_bpftrace") is not None else float("nan")
    pa = h.get("handler_added_pct")
    worst_e, worst_b = max(worst_e, re), max(worst_b, rb if b else 0)
    worst_p = max(worst_p, pa or 0)
    print("%-15s %9.1f %9.1f %9s %9s %14.3f %16s" % (m, h["ns_per_event"], e["ns_per_event"] if e else 0,
          "%.1f" % b["ns_per_event"] if b else "-", "%+.1f" % pa if pa is not None else "-", re,
          "%.3f" % rb if b else "-"))
print("handler/empty end to end: worst %.3f (target <= 1.05); the handler program itself adds"
      " at most %.1f %% to a hit (BPF run-time statistics)" % (worst_e, worst_p))
print("handler/bpftrace: worst %s (target <= 1.00)" % ("%.3f" % worst_b if worst_b else "-"))
'
