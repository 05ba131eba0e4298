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
# --versus runs a second perf record and a second dbtap profile beside the first two,
# started the same way (the control: what two samplers of one kind agree on in the
# same seconds), and compares perf with perf and dbtap with dbtap by the same top 20
# as dbtap with perf; then what the binomial model expects the largest of those 20
# gaps to be for the samples taken (two samples drawn from the pooled shares).
# DBTAP_BENCH_CONTROL=0 leaves the second pair out (two samplers instead of four: the
# cluster's cost compared), DBTAP_BENCH_HZ="99" picks the frequencies.
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
#     each one's samples against HZ x the cluster's CPU time (schedstat, cutime);
#     pgbench's TPS, the cluster's CPU per transaction and each sampler's own CPU.
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
import collections, itertools, json, math, os, random, re, signal, struct, subprocess, sys, time

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

def proc_cpu_all(pid):
    """proc_cpu() of every thread of pid."""
    t = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            t += proc_cpu_task(pid, int(tid))
        except OSError:
            pass   # gone in between
    return t

def proc_cpu_task(pid, tid):
    return int(open("/proc/%d/task/%d/schedstat" % (pid, tid)).read().split()[0]) / 1e9

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

class Perf:
    """perf record -e cpu-clock -g -a, its events off (-D -1) until enable(). perf record
    -a turns its events on only after it has read every process's maps, a second or two
    on a loaded machine: started as dbtap is, it missed the first seconds of pgbench (its
    connections' start-up, page faults of fresh backends), which dbtap counted. So it
    starts with its events off and pgbench only once perf has acknowledged turning them
    on: every sampler sees all of pgbench."""
    def __init__(self, freq, out):
        ctl_r, self.ctl = os.pipe()
        self.ack, ack_w = os.pipe()
        self.out = out
        self.p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-F", str(freq), "-a", "-o", out,
                                   "-D", "-1", "--control", "fd:%d,%d" % (ctl_r, ack_w)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(ctl_r, ack_w))
        os.close(ctl_r); os.close(ack_w)

    def enable(self):
        os.write(self.ctl, b"enable\n")
        if not os.read(self.ack, 16).startswith(b"ack"):
            sys.exit("error: perf record did not enable its events")
        os.close(self.ack)   # ctl stays open while perf records: perf ends at its end of file

    def stop(self):
        """Waits for the exit that the SIGINT sent before asked for; the rusage."""
        _, _, ru = os.wait4(self.p.pid, 0)
        os.close(self.ctl)
        return ru

def perf_repair(path):
    """Puts back the sample-id trailer of perf's side-band records (KSYMBOL, BPF_EVENT)
    where the record is longer than its contents: with two perf record -a at once, a BPF
    program loaded or unloaded (by anything on the machine) gives one of them records
    whose size counts the trailer once for each receiver, the trailer written after the
    name and not at the end; perf script then reads a time and id from what lies at the
    end and stops at the first it cannot parse ("failed to process type: 17"), dropping
    the rest of the file. The number of records put right."""
    with open(path, "r+b") as f:
        d = bytearray(f.read())
        magic, _, _, a_off, _, d_off, d_size = struct.unpack_from("<7Q", d, 0)
        if magic != 0x32454c4946524550:   # "PERFILE2"
            return 0
        # sample_id_all: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, 8 bytes each if sampled
        stype = struct.unpack_from("<Q", d, a_off + 24)[0]   # the first perf_event_attr's sample_type
        trailer = 8 * sum(bool(stype & b) for b in (1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16))
        fixed, off, end = 0, d_off, d_off + d_size
        while off + 8 <= end:
            typ, _, size = struct.unpack_from("<IHH", d, off)
            if size < 8 or off + size > end:
                break
            base = None
            if typ == 17:   # PERF_RECORD_KSYMBOL: addr, len, type, flags, the name to 8 bytes
                nul = d.find(0, off + 24, off + size)
                if nul >= 0:
                    base = 24 + (nul - off - 24 + 1 + 7) // 8 * 8
            elif typ == 18:   # PERF_RECORD_BPF_EVENT: type, flags, id, tag
                base = 24
            if (base is not None and size > base + trailer and
                    d[off + size - trailer:off + size] != d[off + base:off + base + trailer]):
                d[off + size - trailer:off + size] = d[off + base:off + base + trailer]
                fixed += 1
            off += size
        if fixed:
            f.seek(0)
            f.write(d)
    return fixed

def perf_fold(data, folded, pids):
    """perf script's stacks folded as stackcollapse-perf does (the same work in its place),
    root the pid, into folded; the postmaster's children from perf's own fork records go
    into pids: also those that came and went between the look at /proc and the end
    (pgbench's first connection, which reads the scale), as dbtap --pg follows them.
    The rusage of perf script, and the samples perf lost (its ring buffer full: of any
    process, not only the cluster's)."""
    err = open(data + ".err", "w+")
    ps = subprocess.Popen(["perf", "script", "-i", data, "-F", "comm,pid,tid,ip,sym", "--show-task-events",
                           "--show-lost-events"], stdout=subprocess.PIPE, stderr=err, text=True)
    stacks, cur, who, lost = {}, [], None, 0
    for line in ps.stdout:
        if not line.strip():
            if who is not None and cur:
                k = (who, ";".join(reversed(cur)))
                stacks[k] = stacks.get(k, 0) + 1
            cur, who = [], None
            continue
        if "PERF_RECORD_" in line:
            m = re.search(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):", line)
            if m and int(m.group(2)) == PG_PID:
                pids.add(int(m.group(1)))
            m = re.search(r"PERF_RECORD_LOST\w*\s+lost:?\s*(\d+)", line)
            if m:
                lost += int(m.group(1))
            continue
        if not line[0].isspace():
            m = re.match(r"\S+\s+(\d+)/(\d+)", line)
            who = int(m.group(1)) if m else None
            continue
        parts = line.split(None, 1)
        cur.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
    _, _, ru = os.wait4(ps.pid, 0)
    err.seek(0)
    bad = [l.strip() for l in err if "failed to process" in l]
    if bad:
        print("warning: perf script read only part of %s: %s" % (data, bad[0]))
    with open(folded, "w") as f:
        for (pid, s), n in sorted(stacks.items()):
            f.write("%d;%s %d\n" % (pid, s, n))
    return ru, lost

def perf_phases(data, freq):
    """Per CPU, where in the period perf's samples fall (0 to 1): the circular mean of
    each sample's time modulo the period, and how tightly they hold it (1: every sample
    at the same phase). A per-CPU cpu-clock event's timer is pushed forward by whole
    periods from the instant it was turned on, so two samplers keep one offset all run."""
    period = 10**9 // freq   # the kernel's period for -F on a clock event
    acc = {}
    out = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time", "--ns"],
                         capture_output=True, text=True).stdout
    for m in re.finditer(r"\[(\d+)\]\s+(\d+)\.(\d{9}):", out):
        a = 2 * math.pi * ((int(m.group(2)) * 10**9 + int(m.group(3))) % period) / period
        c = acc.setdefault(int(m.group(1)), [0.0, 0.0, 0])
        c[0] += math.cos(a); c[1] += math.sin(a); c[2] += 1
    return {cpu: ((math.atan2(s, c) / (2 * math.pi)) % 1, math.hypot(c, s) / n) for cpu, (c, s, n) in acc.items()}

def versus_perf(freq, control):
    """One run of pgbench under dbtap profile --pg and perf record -a side by side; with
    control, a second of each beside them, started the same way, whose agreement with
    the first is what two samplers of one kind show. Returns {sampler: (samples, samples
    by leaf function)} of the cluster's processes."""
    cpu0 = cluster_cpu()
    load = os.getloadavg()[0]
    perfs = [Perf(freq, "perf.data")] + ([Perf(freq, "perf2.data")] if control else [])
    folds = [open("dbtap.folded", "w")] + ([open("dbtap2.folded", "w")] if control else [])
    dts = [start([DBTAP, "profile", "--pg", PGDATA, "-F", str(freq), "--by", "pid", "--folded"], stdout=f)
           for f in folds]
    perfs[0].enable()
    if control:
        # a random part of a period between the two: the second perf's timers then sit
        # wherever in the first's period, as dbtap's do (it turns them on when it starts)
        time.sleep(random.random() / freq)
        perfs[1].enable()
    time.sleep(0.5)
    own0 = [proc_cpu_all(p.p.pid) for p in perfs] + [proc_cpu_all(d.pid) for d in dts]
    w0 = time.monotonic()
    bench = subprocess.Popen(["pgbench", "-n", "-S", "-M", "prepared", "-c", CLIENTS, "-j", "2", "-T", str(int(SECS))],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(SECS / 2)
    def parent(p):
        try:
            return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return None   # gone in between
    pids = {PG_PID} | {int(p) for p in os.listdir("/proc") if p.isdigit() and parent(p) == PG_PID}
    out = bench.communicate()[0]
    # all end together; the CPU each first sampler spends from here on is its end-to-folded cost
    own1 = [proc_cpu_all(p.p.pid) for p in perfs] + [proc_cpu_all(d.pid) for d in dts]
    wall = time.monotonic() - w0
    t_perf = time.monotonic()
    for p in perfs:
        p.p.send_signal(signal.SIGINT)
    t_dbtap = time.monotonic()
    for d in dts:
        d.send_signal(signal.SIGINT)
    rus = []
    for d in dts:
        rus.append(os.wait4(d.pid, 0)[2])
        if d is dts[0]:
            end_d = time.monotonic() - t_dbtap
    for f in folds:
        f.close()
    ru_prs = []
    for p in perfs:
        ru_prs.append(p.stop())
        if p is perfs[0]:
            end_pr = time.monotonic() - t_perf
    time.sleep(0.3)   # the backends exit after pgbench
    cpu = cluster_cpu() - cpu0
    repaired = [perf_repair(p.out) for p in perfs]
    t0 = time.monotonic()
    ru_ps, lost = perf_fold("perf.data", "perf.folded", pids)
    end_ps = time.monotonic() - t0
    lost = [lost] + ([perf_fold("perf2.data", "perf2.folded", pids)[1]] if control else [])
    perf_end = end_pr + end_ps
    ru_d, ru_pr = rus[0], ru_prs[0]
    cpu_d = ru_cpu(ru_d) - own1[len(perfs)]
    cpu_p = ru_cpu(ru_pr) - own1[0] + ru_cpu(ru_ps)
    tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
    txns = int(re.search(r"processed: (\d+)", out).group(1))
    print("at %d Hz (load %.1f), end of sampling -> folded file: dbtap %.2f s, perf record + perf script + folding"
          " %.2f s (%.1fx)" % (freq, load, end_d, perf_end, perf_end / end_d))
    print("  CPU time of that: dbtap %.3f s, perf record + perf script %.3f s (%.1fx; the folding in"
          " Python not counted)" % (cpu_d, cpu_p, cpu_p / cpu_d if cpu_d > 0 else float("inf")))
    print("peak RSS: dbtap %.1f MB, perf record %.1f MB, perf script %.1f MB" %
          (ru_d.ru_maxrss / 1024, ru_pr.ru_maxrss / 1024, ru_ps.ru_maxrss / 1024))
    # what the samplers took: their own processes' CPU while pgbench ran, and the
    # cluster's CPU per transaction (the samples' work in the kernel is charged to it)
    names = ["perf", "perf2"][:len(perfs)] + ["dbtap", "dbtap2"][:len(dts)]
    print("pgbench: %.0f TPS, the cluster's CPU %.1f us per transaction; the samplers' own CPU while it ran: %s" %
          (tps, cpu * 1e6 / txns,
           ", ".join("%s %.2f %%" % (n, 100 * (b - a) / wall) for n, a, b in zip(names, own0, own1))))
    if control:
        ph = [perf_phases(p.out, freq) for p in perfs]
        print("the two perfs' timers: the second's samples %s of a period after the first's, per CPU"
              " (held to %s)" % (", ".join("%.2f" % ((ph[1][c][0] - ph[0][c][0]) % 1) for c in sorted(ph[0]) if c in ph[1]),
                                 ", ".join("%.2f" % min(ph[0][c][1], ph[1][c][1]) for c in sorted(ph[0]) if c in ph[1])))

    keep = os.environ.get("DBTAP_BENCH_KEEP")
    if keep:
        n = len([f for f in os.listdir(keep) if f.startswith("run")])
        d = os.path.join(keep, "run%02d-%d" % (n, freq)); os.makedirs(d)
        for f in ("dbtap.folded", "perf.folded", "perf.data", "dbtap2.folded", "perf2.folded", "perf2.data"):
            if os.path.exists(f):
                subprocess.run(["cp", f, d])
        open(os.path.join(d, "pids"), "w").write(" ".join(map(str, sorted(pids))) + "\n")
    s = {"dbtap": selfshare("dbtap.folded", lambda g: True),
         "perf": selfshare("perf.folded", lambda g: int(g) in pids)}
    if control:
        s["dbtap2"] = selfshare("dbtap2.folded", lambda g: True)
        s["perf2"] = selfshare("perf2.folded", lambda g: int(g) in pids)
    print("the cluster's CPU time x %d Hz: %.0f samples; against that %s (perf lost %s of the machine's;"
          " %s side-band records repaired)" %
          (freq, cpu * freq, ", ".join("%s took %+.1f %%" % (k, 100 * (s[k][0] / (cpu * freq) - 1))
                                        for k in ("dbtap", "dbtap2", "perf", "perf2") if k in s),
           " and ".join(map(str, lost)), " and ".join(map(str, repaired))))
    return s

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

def top20(by):
    """The 20 named functions with the most samples (unnamed frames are [unknown] in perf
    and [module+0xoff] in dbtap: not comparable by name)."""
    return [k for k, _ in sorted(by.items(), key=lambda x: (-x[1], x[0])) if not k.startswith("[")][:20]

# the pairs compared: the first of each is the reference, whose top 20 are compared
PAIRS = (("dbtap vs perf", "perf", "dbtap"), ("perf vs perf", "perf", "perf2"), ("dbtap vs dbtap", "dbtap", "dbtap2"))

def gaps(a, b):
    """Over a's top 20: the largest gap to b in points, its function, its sigma, and the
    mean of the squared gaps in sigmas (1 where the two differ by independent sampling)."""
    (ta, sa), (tb, sb) = a, b
    w, z2 = (0.0, "-", 0.0), []
    for k in top20(sa):
        x, y = sa[k] / ta, sb.get(k, 0) / tb
        # two independent samplers: a share p of n samples has a standard deviation of
        # sqrt(p(1-p)/n) in each; the difference's is the root of their squares' sum
        sig = (x * (1 - x) * (1 / ta + 1 / tb)) ** 0.5
        z2.append(((x - y) / sig) ** 2 if sig else 0)
        if abs(x - y) > w[0]:
            w = (abs(x - y), k, abs(x - y) / sig if sig else 0)
    return 100 * w[0], w[1], w[2], sum(z2) / len(z2) if z2 else 0

def compare(s):
    """Prints perf's top 20 named functions by self share beside dbtap's (and the second
    of each where there is one); the largest gap of each pair."""
    print("samples of the cluster: %s" % ", ".join("%s %d" % (k, s[k][0]) for k in ("dbtap", "dbtap2", "perf", "perf2")
                                                   if k in s))
    tp, sp = s["perf"]
    td, sd = s["dbtap"]
    ctl = "perf2" in s
    print("%-34s %7s %7s %7s %6s" % ("top 20 by self share (perf)", "perf %", "dbtap %", "diff", "sigma") +
          (" %7s %7s %7s %7s" % ("perf2 %", "-perf", "dbtap2%", "-dbtap") if ctl else ""))
    for k in top20(sp):
        a, b = sp[k] / tp, sd.get(k, 0) / td
        sig = (a * (1 - a) / tp + a * (1 - a) / td) ** 0.5
        line = "%-34.34s %7.2f %7.2f %+7.2f %6.1f" % (k, 100 * a, 100 * b, 100 * (b - a), abs(b - a) / sig if sig else 0)
        if ctl:
            c = s["perf2"][1].get(k, 0) / s["perf2"][0]
            e = s["dbtap2"][1].get(k, 0) / s["dbtap2"][0]
            line += " %7.2f %+7.2f %7.2f %+7.2f" % (100 * c, 100 * (c - a), 100 * e, 100 * (e - b))
        print(line)
    res = {}
    for name, a, b in PAIRS:
        if a in s and b in s:
            res[name] = gaps(s[a], s[b])
            print("largest difference, %-14s %5.2f points (%s, %.1f sigma; goal: within 2)" %
                  (name + ":", res[name][0], res[name][1], res[name][2]))
    print("sampling noise (2 sigma) for a 5 %% share: %.2f points" % (100 * 2 * (0.05 * 0.95 * (1 / td + 1 / tp)) ** 0.5))
    return res

def noise(counts, na, nb, trials, rng):
    """What two samplers differ by when each takes independent samples from the same
    shares (the binomial model the sigmas assume): the largest gap over the first's top
    20, in points, of each of trials draws of na and nb samples, sorted."""
    names = list(counts)
    cum = list(itertools.accumulate(counts.values()))
    out, z2 = [], 0
    for _ in range(trials):
        a = collections.Counter(rng.choices(names, cum_weights=cum, k=na))
        b = collections.Counter(rng.choices(names, cum_weights=cum, k=nb))
        g = gaps((na, a), (nb, b))
        out.append(g[0])
        z2 += g[3]
    return sorted(out), z2 / trials

def noise_line(counts, na, nb, rng):
    trials = max(200, min(2000, 3000000 // (na + nb)))
    w, z2 = noise(counts, na, nb, trials, rng)
    return ("%d and %d samples: median %.2f, 90 %% %.2f points; over 2 points in %.0f %% of %d draws"
            " (mean squared gap %.2f sigmas)" %
            (na, nb, w[len(w) // 2], w[int(len(w) * 0.9)], 100 * sum(x > 2 for x in w) / len(w), trials, z2))

CONTROL = VERSUS and os.environ.get("DBTAP_BENCH_CONTROL", "1") != "0"
if VERSUS:
    rng = random.Random(12)   # the simulation's draws: the same figures for the same counts
    for freq in map(int, os.environ.get("DBTAP_BENCH_HZ", "99 999").split()):
        runs = [versus_perf(freq, CONTROL) for _ in range(ROUNDS)]
        print()
        res = [compare(r) for r in runs]
        pool = {}
        for r in runs:
            for k, (t, by) in r.items():
                p = pool.setdefault(k, [0, {}])
                p[0] += t
                for f, n in by.items():
                    p[1][f] = p[1].get(f, 0) + n
        print("\n== at %d Hz, %d runs: largest difference of each run, in points (its sigma)" % (freq, ROUNDS))
        for name in res[0]:
            print("  %-15s %s" % (name + ":", ", ".join("%.2f (%.1f)" % (r[name][0], r[name][2]) for r in res)))
        print("mean squared gap of the top 20 in sigmas over the runs (1: independent samples): %s" %
              ", ".join("%s %.2f" % (name, sum(r[name][3] for r in res) / len(res)) for name in res[0]))
        print("all runs pooled:")
        pres = compare({k: tuple(v) for k, v in pool.items()})
        print("mean squared gap of the top 20 in sigmas, pooled: %s" %
              ", ".join("%s %.2f" % (name, v[3]) for name, v in pres.items()))
        # the model's expectation: two samples drawn from every sampler's pooled shares
        truth = {}
        for t, by in pool.values():
            for f, n in by.items():
                truth[f] = truth.get(f, 0) + n
        nd = sorted(r["dbtap"][0] for r in runs)[len(runs) // 2]
        npf = sorted(r["perf"][0] for r in runs)[len(runs) // 2]
        print("noise alone (independent samples from the pooled shares), the largest gap over the top 20:")
        print("  the runs' median, " + noise_line(truth, npf, nd, rng))
        print("  pooled, " + noise_line(truth, pool["perf"][0], pool["dbtap"][0], rng))
        if freq == 99:
            # how many samples a run needs for the 2-point goal to hold by noise alone
            for n in (700, 1000, 1400, 2000, 2800):
                print("  " + noise_line(truth, n, n, rng))
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


compare(versus_perf(99, False))
# the same side by side with ten times the samples: the shares' sampling noise shrinks
compare(versus_perf(999, False))
PY
