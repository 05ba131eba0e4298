#!/usr/bin/env python3
# bench/lib/abtable.py: the table of a saved bench/lib/abrun.py run (--json FILE), as
# markdown for docs/bench.md: every command's row, then each one's programs.
#
#   abtable.py FILE.json
import json
import sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cfg = lines[0]
rows = [r for r in lines if r["report"] == "row"]
costs = cfg.get("probe_costs") or {}
print(f"{cfg['workload']} workload, pgbench -c {cfg['clients']} -j {cfg['threads']}, "
      f"{cfg['pairs']} pairs of {cfg['secs']:g} s per command, {cfg['date']}, Linux "
      f"{cfg['kernel']}, {cfg['cpus']} cpus" +
      ("; dbtap bench then: " + ", ".join(f"{k} {v[0]:.0f} ns per hit (its handler {v[1]:.0f} ns)"
                                          for k, v in sorted(costs.items())) if costs else ""))
print()
print("| command | TPS ratio | min-max | CPU/txn untraced | CPU/txn traced | added ns/txn "
      "| added min-max | predicted ns/txn | switches/txn | pgbench CPU/txn | tracer CPU "
      "| others / niced / load | goal |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
for r in rows:
    pred = "-" if r["predicted_ns_per_tx"] is None else "%.0f" % r["predicted_ns_per_tx"]
    print("| `%s` | %.3f | %.3f-%.3f | %.1f us | %.1f us | %+.0f | %+.0f..%+.0f | %s | %.2f / %.2f "
          "| %.1f us | %.1f %% | %.0f %% / %.0f %% / %.1f | %s |" % (
              r["argv"], r["tps_ratio"], r["tps_ratio_min"], r["tps_ratio_max"],
              r["untraced_cpu_ns_per_tx"] / 1e3, r["traced_cpu_ns_per_tx"] / 1e3,
              r["added_ns_per_tx"], r["added_ns_min"], r["added_ns_max"], pred,
              r["untraced_switches_per_tx"], r["traced_switches_per_tx"],
              r["pgbench_cpu_ns_per_tx"] / 1e3, r["tracer_cpu_pct"], r["others_pct"],
              r["nice_pct"], r["load1"], r["goal"]))
print()
print("| command | program (type): runs per transaction x ns per run |")
print("|---|---|")
for r in rows:
    if r["programs"] is not None:
        progs = [p for p in r["programs"] if p["runs_per_tx"] > 0]
        print("| `%s` | %s |" % (r["argv"], "; ".join(
            "%s (%s): %.2f x %.0f" % (p["name"], p["type"], p["runs_per_tx"], p["ns_per_run"])
            for p in progs) or "none runs"))
