#!/bin/bash
# bench/profile.sh: what `dbtap profile` costs a PostgreSQL server, how fast and small it
# is, and how it compares with `perf record -g` + `perf script` on the same load.
#
#	bench/profile.sh [ROUNDS [SECS]]    default 3 rounds of 10 s per mode
#	bench/profile.sh --versus [RUNS [SECS [CLIENTS]]]
#	                                    only the side by side with perf, RUNS times at
#	                                    99 and 999 Hz (default 3), then every run's
#	                                    samples pooled per frequency; CLIENTS pgbench
#	                                    clients (default 2; more keep both CPUs busy
#	                                    on a loaded machine: more samples, less noise)
#
# One throwaway cluster under pgbench -S -M prepared -c 2 -j 2 (select-only: the most
# transactions, so the sampling's share of the work is the largest). Prints, all
# measured side by side in this run:
#   - TPS under dbtap profile --pg at 99 Hz and 999 Hz, as ratios to untraced (rounds
#     interleaved so drift hits all modes alike), and the backends' CPU time per
#     transaction (the postmaster's reaped children), whose difference to untraced is
#     what sampling costs each transaction;
#   - dbtap's own CPU while it samples at 99 Hz (% of one core) and its peak RSS with
#     the server binary's symbols loaded;
#   - 10,000+ distinct stacks (tests/workloads/stacktree) named after the end: wall
#     and CPU milliseconds;
#   - beside `perf record -g -F 99 -a` on the same seconds: time from the end of
#     sampling to a folded file, peak RSS, and the top 20 functions by self share of
#     the cluster's processes in perf's profile against dbtap's (points apart), and
#     each one's samples against HZ x the cluster's CPU time (schedstat, cutime).
# Ratios and side-by-side figures, never absolute targets: machines differ.
# DBTAP_BENCH_KEEP=DIR keeps each side-by-side run's folded files, perf.data and the
# cluster's pids in DIR/runNN-HZ, to pool or dig into later.
VERSUS=0
[ "$1" = --versus ] && { VERSUS=1; shift; }
ROUNDS=${1:-3}
SECS=${2:-10}
CLIENTS=${3:-2}
. "$(dirname "$0")/../tests/lib/standalone.sh"
standalone_init bench-profile "BPF, perf events"
command -v perf >/dev/null || {
	echo "error: bench/profile.sh needs perf, which is not installed (not found in PATH)" >&2
	echo "hint: apt-get install linux-perf" >&2
	exit 1
}
[ -x "$ROOT/build/workloads/stacktree" ] || { echo "error: run make first" >&2; exit 1; }

# the server from a private copy of its binary: other tracers' uprobes on the system's
# binary would trap in these backends too (int3 at every USDT site they probe), work
# that is neither dbtap's nor perf's and that neither run could keep out
standalone_cluster init
cd "$TRASH" || exit 1
export VERSUS ROUNDS SECS CLIENTS PG_PID PGDATA ROOT DBTAP
exec python3 - <<'PY'
import json, os, re, signal, subprocess, sys, time

VERSUS, ROUNDS, SECS = int(os.environ["VERSUS"]), int(os.environ["ROUNDS"]), float(os.environ["SECS"])
CLIENTS = os.environ["CLIENTS"]
PG_PID, PGDATA, DBTAP, ROOT = int(os.environ["PG_PID"]), os.environ["PGDATA"], os.environ["DBTAP"], os.environ["ROOT"]
HZ = os.sysconf("SC_CLK_TCK")

def children_cpu():
    f = open("/proc/%d/stat" % PG_PID).read().rsplit(")", 1)[1].split()
    return (int(f[13]) + int(f[14])) / HZ   # cutime + cstime

def proc_cpu(pid):
    """Seconds on CPU so far (schedstat: nanoseconds, not clock ticks)."""
    return int(open("/proc/%d/schedstat" % pid).read().split()[0]) / 1e9

def ru_cpu(ru):
    return ru.ru_utime + ru.ru_stime

def pgbench():
    c0 = children_cpu()
    out = subprocess.run(["pgbench", "-n", "-S", "-M", "prepared", "-c", "2", "-j", "2", "-T", str(int(SECS))],
                         capture_output=True, text=True).stdout
    time.sleep(0.3)   # the backends exit after pgbench
    c1 = children_cpu()
    tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
    n = int(re.search(r"processed: (\d+)", out).group(1))
    return tps, (c1 - c0) * 1e6 / n

def start(cmd, ready=b"tracing", **kw):
    p = subprocess.Popen(cmd, stdout=kw.get("stdout", subprocess.DEVNULL), stderr=subprocess.PIPE)
    line = p.stderr.readline()
    while ready not in line:
        if not line:
            sys.exit("error: %s did not start" % cmd[0])
        line = p.stderr.readline()
    return p

def stop(p):
    """SIGINT, then wait: seconds from the signal to the exit, and the rusage."""
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    return time.monotonic() - t0, ru

# --- beside perf --------------------------------------------------------------------------
def cluster_cpu():
    """Seconds on CPU of the cluster so far: the postmaster, its live children
    (schedstat) and the children it reaped (cutime + cstime)."""
    t = children_cpu()
    for p in [str(PG_PID)] + os.listdir("/proc"):
        try:
            if p == str(PG_PID) or (p.isdigit() and
                    int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]) == PG_PID):
                t += proc_cpu(int(p))
        except (OSError, IndexError, ValueError):
            pass   # gone in between: reaped, in cutime next time
    return t

def versus_perf(freq):
    cpu0 = cluster_cpu()
    # perf record -a enables its events only after it has read every process's maps,
    # a second or two on a loaded machine: started as dbtap is, it missed the first
    # seconds of pgbench (its connections' start-up, page faults of fresh backends),
    # which dbtap counted. So it starts with its events off (-D -1) and pgbench only
    # once perf has acknowledged turning them on: both see all of pgbench.
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-F", str(freq), "-a", "-o", "perf.data",
                             "-D", "-1", "--control", "fd:%d,%d" % (ctl_r, ack_w)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(ctl_r, ack_w))
    os.close(ctl_r); os.close(ack_w)
    fold = open("dbtap.folded", "w")
    dt = start([DBTAP, "profile", "--pg", PGDATA, "-F", str(freq), "--by", "pid", "--folded"], stdout=fold)
    os.write(ctl_w, b"enable\n")
    if not os.read(ack_r, 16).startswith(b"ack"):
        sys.exit("error: perf record did not enable its events")
    os.close(ack_r)   # ctl_w stays open while perf records: perf ends at its end of file
    time.sleep(0.5)
    bench = subprocess.Popen(["pgbench", "-n", "-S", "-M", "prepared", "-c", CLIENTS, "-j", "2", "-T", str(int(SECS))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(SECS / 2)
    def parent(p):
        try:
            return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return None   # gone in between
    pids = {PG_PID} | {int(p) for p in os.listdir("/proc") if p.isdigit() and parent(p) == PG_PID}
    bench.wait()
    # both end together; the CPU each spends from here on is its end-to-folded cost
    cpu_pr0, cpu_d0 = proc_cpu(perf.pid), proc_cpu(dt.pid)
    t_perf = time.monotonic(); perf.send_signal(signal.SIGINT)
    t_dbtap = time.monotonic(); dt.send_signal(signal.SIGINT)
    _, _, ru_d = os.wait4(dt.pid, 0); end_d = time.monotonic() - t_dbtap
    fold.close()
    _, _, ru_pr = os.wait4(perf.pid, 0); end_pr = time.monotonic() - t_perf
    os.close(ctl_w)
    time.sleep(0.3)   # the backends exit after pgbench
    cpu = cluster_cpu() - cpu0
    t0 = time.monotonic()
    ps = subprocess.Popen(["perf", "script", "-i", "perf.data", "-F", "comm,pid,tid,ip,sym", "--show-task-events"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # folding perf script's output, as stackcollapse-perf does (the same work in its place)
    stacks, cur, who = {}, [], None
    for line in ps.stdout:
        if not line.strip():
            if who is not None and cur:
                k = (who, ";".join(reversed(cur)))
                stacks[k] = stacks.get(k, 0) + 1
            cur, who = [], None
            continue
        if "PERF_RECORD_" in line:
            # the postmaster's children by perf's own fork records: also those that came
            # and went between the look at /proc above and the end (pgbench's first
            # connection, which reads the scale), as dbtap --pg follows them
            m = re.search(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):", line)
            if m and int(m.group(2)) == PG_PID:
                pids.add(int(m.group(1)))
            continue
        if not line[0].isspace():
            m = re.match(r"\S+\s+(\d+)/(\d+)", line)
            who = int(m.group(1)) if m else None
            continue
        parts = line.split(None, 1)
        cur.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
    _, _, ru_ps = os.wait4(ps.pid, 0)
    with open("perf.folded", "w") as f:
        for (pid, s), n in sorted(stacks.items()):
            f.write("%d;%s %d\n" % (pid, s, n))
    end_ps = time.monotonic() - t0
    perf_end = end_pr + end_ps
    cpu_d = ru_cpu(ru_d) - cpu_d0
    cpu_p = ru_cpu(ru_pr) - cpu_pr0 + ru_cpu(ru_ps)
    print("at %d Hz, end of sampling -> folded file: dbtap %.2f s, perf record + perf script + folding %.2f s (%.1fx)" %
          (freq, end_d, perf_end, perf_end / end_d))
    print("  CPU time of that: dbtap %.3f s, perf record + perf script %.3f s (%.1fx; the folding in"
          " Python not counted)" % (cpu_d, cpu_p, cpu_p / cpu_d if cpu_d > 0 else float("inf")))
    print("peak RSS: dbtap %.1f MB, perf record %.1f MB, perf script %.1f MB" %
          (ru_d.ru_maxrss / 1024, ru_pr.ru_maxrss / 1024, ru_ps.ru_maxrss / 1024))

    keep = os.environ.get("DBTAP_BENCH_KEEP")
    if keep:
        n = len([f for f in os.listdir(keep) if f.startswith("run")])
        d = os.path.join(keep, "run%02d-%d" % (n, freq)); os.makedirs(d)
        for f in ("dbtap.folded", "perf.folded", "perf.data"):
            subprocess.run(["cp", f, d])
        open(os.path.join(d, "pids"), "w").write(" ".join(map(str, sorted(pids))) + "\n")
    td, sd = selfshare("dbtap.folded", lambda g: True)
    tp, sp = selfshare("perf.folded", lambda g: int(g) in pids)
    print("the cluster's CPU time x %d Hz: %.0f samples; dbtap took %+.1f %% of that, perf %+.1f %%" %
          (freq, cpu * freq, 100 * (td / (cpu * freq) - 1), 100 * (tp / (cpu * freq) - 1)))
    return td, sd, tp, sp

def selfshare(path, keep):
    """Samples, and samples by leaf frame, of the stacks whose root keep() takes."""
    tot, by = 0, {}
    for line in open(path):
        frames, _, n = line.rstrip("\n").rpartition(" ")
        f = frames.split(";")
        if not keep(f[0]):
            continue
        n = int(n)
        tot += n
        by[f[-1]] = by.get(f[-1], 0) + n
    return tot, by

def compare(td, sd, tp, sp):
    """Prints perf's top 20 named functions by self share beside dbtap's; the largest gap."""
    print("samples of the cluster: dbtap %d, perf %d" % (td, tp))
    top = [k for k, _ in sorted(sp.items(), key=lambda x: -x[1]) if not k.startswith("[")][:20]
    worst = 0
    print("%-40s %8s %8s %7s %6s" % ("top 20 by self share (perf)", "perf %", "dbtap %", "diff", "sigma"))
    for k in top:
        a, b = sp[k] / tp, sd.get(k, 0) / td
        # two independent samplers: a share p of n samples has a standard deviation of
        # sqrt(p(1-p)/n) in each; the difference's is the root of their squares' sum
        sig = (a * (1 - a) / tp + a * (1 - a) / td) ** 0.5
        worst = max(worst, abs(a - b))
        print("%-40.40s %8.2f %8.2f %+7.2f %6.1f" % (k, 100 * a, 100 * b, 100 * (b - a),
                                                    abs(b - a) / sig if sig else 0))
    print("largest difference: %.2f points (goal: within 2); sampling noise (2 sigma) for a 5 %% share: %.2f points" %
          (100 * worst, 100 * 2 * (0.05 * 0.95 * (1 / td + 1 / tp)) ** 0.5))
    return 100 * worst

if VERSUS:
    for freq in (99, 999):
        runs = [versus_perf(freq) for _ in range(ROUNDS)]
        worst = [compare(*r) for r in runs]
        pool = [0, {}, 0, {}]
        for r in runs:
            for i in (0, 2):
                pool[i] += r[i]
                for k, n in r[i + 1].items():
                    pool[i + 1][k] = pool[i + 1].get(k, 0) + n
        print("\n== at %d Hz, %d runs: largest differences %s points; all runs pooled:" %
              (freq, ROUNDS, ", ".join("%.2f" % w for w in worst)))
        compare(*pool)
    sys.exit(0)

# --- cost to the server ---------------------------------------------------------------
res = {"none": [], "99": [], "999": []}
progns = {"99": [], "999": []}

def progs():
    try:
        return json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                                         text=True).stdout)
    except ValueError:
        return []

def prog_ids():
    return {q["id"] for q in progs() if q.get("name") == "profile_perf"}

def prog_stats(before):
    """ns per run of the profile program dbtap loaded (the one not there before), runs."""
    for q in progs():
        if q.get("name") == "profile_perf" and q["id"] not in before and q.get("run_cnt"):
            return q["run_time_ns"] / q["run_cnt"], q["run_cnt"]
    return None

stats_was = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
own = []
rss_pg = 0
for r in range(ROUNDS):
    modes = ["none", "99", "999"] if r % 2 == 0 else ["999", "99", "none"]
    for m in modes:
        if m == "none":
            res[m].append(pgbench())
            continue
        before = prog_ids()
        p = start([DBTAP, "profile", "--pg", PGDATA, "-F", m, "-j"], stdout=subprocess.PIPE)
        c0 = proc_cpu(p.pid)
        t0 = time.monotonic()
        res[m].append(pgbench())
        c1, t1 = proc_cpu(p.pid), time.monotonic()
        prog = prog_stats(before)
        _, ru = stop(p)
        summary = json.loads(p.stdout.read().decode().strip().splitlines()[-1])
        backend = sum(t["samples"] for t in summary["types"] if t["type"] == "client backend")
        if prog:
            # the program's own time, per sample and per transaction of the run
            txns = res[m][-1][0] * SECS
            progns[m].append((prog[0], prog[0] * backend / txns / 1000))
        if m == "99":
            own.append((c1 - c0) / (t1 - t0))
            rss_pg = max(rss_pg, ru.ru_maxrss)

def med(v):
    v = sorted(v)
    return v[len(v) // 2]

base_tps, base_cpu = med([t for t, _ in res["none"]]), med([c for _, c in res["none"]])
print("dbtap profile, %d rounds of %g s of pgbench -S -c 2 -j 2 per mode, %d cpus" % (ROUNDS, SECS, os.cpu_count()))
print("%-10s %10s %8s %14s %12s" % ("mode", "TPS", "ratio", "CPU us/txn", "added"))
for m in ("none", "99", "999"):
    tps, cpu = med([t for t, _ in res[m]]), med([c for _, c in res[m]])
    print("%-10s %10.0f %8.3f %14.2f %+11.1f%%" % ("untraced" if m == "none" else m + " Hz", tps, tps / base_tps,
          cpu, 100 * (cpu - base_cpu) / base_cpu))
for m in ("99", "999"):
    if progns[m]:
        print("%s Hz: the BPF program takes %.0f ns per sample: %.3f us per transaction of the"
              " backends' samples" % (m, med([a for a, _ in progns[m]]), med([b for _, b in progns[m]])))
open("/proc/sys/kernel/bpf_stats_enabled", "w").write(stats_was)
print("dbtap's own CPU while sampling at 99 Hz: %.2f %% of one core (median of %d)" % (100 * med(own), len(own)))
print("dbtap peak RSS, --pg at 99 Hz with the server's symbols: %.1f MB" % (rss_pg / 1024))

# --- 10,000 distinct stacks ------------------------------------------------------------
w = subprocess.Popen([ROOT + "/build/workloads/stacktree"], stdout=subprocess.PIPE)
wpid = int(w.stdout.readline().split()[1])
out = subprocess.run([DBTAP, "profile", "-p", str(wpid), "-F", "4999", "-d", str(max(20, SECS)), "-j"],
                     capture_output=True, text=True)
w.kill(); w.wait()
d = json.loads(out.stdout.strip().splitlines()[-1])
print("stacktree: %d samples, %d distinct stacks (%d kernel keys) named in %.0f ms (%.0f ms CPU)" %
      (d["samples"], d["stacks"], d["kernel_keys"], d["symbolize_us"] / 1000, d["symbolize_cpu_us"] / 1000))


compare(*versus_perf(99))
# the same side by side with ten times the samples: the shares' sampling noise shrinks
compare(*versus_perf(999))
PY
