#!/usr/bin/env python3
# bench/lib/abrun.py: what a tracing command costs a PostgreSQL cluster under pgbench,
# from interleaved untraced/traced runs: the one A/B loop every script in bench/ uses.
#
#   abrun.py --pg-pid PID --pgdata DIR [--pairs N] [--secs S] [--warm S]
#            [--commands NAME,...] [--workload txid|select|tpcb] [--builtin SCRIPT]
#            [--clients N]
#            [--threads N] [--diag [NAME,...]] [--probe-cost] [--json FILE]
#            [--versus NAME]
#
# Needs PGHOST/PGPORT/PGUSER/PGDATABASE of the cluster in the environment and
# DBTAP (the binary). For each command, N pairs of runs, untraced and traced, in
# alternating order (pair 1 untraced first, pair 2 traced first, ...), the commands
# taking turns within each round so that drift of the machine hits them all alike.
#
# One run: pgbench -T (warm + secs + 0.3, rounded up) with its per-transaction log; after `warm`
# seconds (connections made, the tracer following the new backends) the harness
# reads every process of the cluster, pgbench and the tracer, then again `secs`
# later. Between the two readings ("the window"):
#   - transactions: pgbench's own log lines whose end time is in the window (the
#     log's total must equal pgbench's "number of transactions actually processed");
#   - TPS: those transactions per second of the window;
#   - server CPU: the sum of /proc/PID/task/*/schedstat's first field (ns on the
#     CPU) over the postmaster and every child of it, per transaction: what the
#     server does per transaction, probes and their traps included. Unlike TPS it
#     barely moves when other jobs take the CPUs;
#   - context switches of the cluster's processes per transaction (/proc/PID/status);
#   - pgbench's and the tracer's own CPU, the machine's busy share (/proc/stat) and
#     load average, so that a reader can judge what else ran.
# Per command: the median of the per-pair TPS ratios (traced / untraced) and their
# min-max, the median CPU per transaction of each side and the median of the
# per-pair differences (added ns per transaction).
#
# --diag: after the pairs, one more traced run per command (or those named) with the kernel's BPF
# run-time statistics on (BPF_ENABLE_STATS, only for that run: they add two clock
# reads to every program of the machine): each program of the tracer (its
# /proc/PID/fdinfo) with its runs per transaction and ns per run. The run counts are
# read at moments of their own, and the transactions between them counted from
# pgbench's log, at least and at most (programs_transactions_min, _max: the time each
# reading took), runs per transaction against the count between their midpoints.
# --probe-cost: `dbtap bench usdt watchpoint` first, for the cost of one USDT hit
# and one watchpoint hit here; with --diag, each command's predicted cost per
# transaction: its programs' runs per transaction x (the mechanism's trap cost +
# the program's own ns per run).
# --perf (with --diag): during that run, `perf record -e cpu-clock -g` samples the
# client backends, and each sample is put where its stack says: in the int3 trap
# (asm_exc_int3 on the stack: a uprobe or USDT site), of that inside a BPF program
# (a bpf_prog_ frame), in a debug exception (a watchpoint), in a BPF program outside
# a trap (a tracepoint, a perf event), or elsewhere. Shares of the backends' own
# samples in one run: the machine's drift between runs does not enter, so this is
# the probe's cost per transaction split into the kernel's trap path and the
# program, the backends' CPU per transaction times each share.
# --versus NAME: the other side of each pair is that command instead of no tracer, so
# the ratio and the added ns per transaction are the command's over NAME's, measured
# in the same pairs (e.g. --commands record-99 --versus profile-99).
# --build LABEL=BINARY (repeatable): NAME@LABEL in --commands is command NAME run by
# that build of dbtap, in the same rounds as the others (a change against the build
# before it: --build base=/tmp/old/dbtap --commands wait,wait@base).
# Ratios measured side by side, never absolute targets: machines differ.
import argparse
import ctypes
import http.client
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

DBTAP = os.environ.get("DBTAP", "dbtap")
# --build: other builds of dbtap by label, for commands named NAME@LABEL
BUILDS = {}


def command_of(name):
    """(argv of the command, its ready pattern) for NAME or NAME@LABEL."""
    base, _, build = name.partition("@")
    args, ready = COMMANDS[base]
    return [BUILDS[build] if build else DBTAP] + args, ready

# name -> (dbtap arguments after the command's own words, line on stderr once attached)
COMMANDS = {
    "tps": (["tps"], r"^tracing "),
    "latency-query": (["latency", "query"], r"^tracing "),
    # the statements from query__start/query__done (a trap each) instead of PgBackendStatus
    "latency-query-usdt": (["latency", "query", "--usdt"], r"^tracing "),
    "count-tx": (["count", "usdt:postgresql:transaction__*"], r"^tracing "),
    # the floor of count-tx: an empty program at the same sites (the trap alone)
    "count-tx-empty": (["count", "--empty-program", "usdt:postgresql:transaction__*"],
                       r"^tracing "),
    "stat-query": (["stat", "--per", "query"], r"^counting "),
    # the statements from the USDT probes (a trap each), as before PgBackendStatus
    "stat-query-usdt": (["stat", "--per", "query", "--usdt"], r"^counting "),
    "watch-xid-trap": (["watch", "xid", "-i", "0"], r"^watching "),
    "watch-xid-poll": (["watch", "xid", "--mode", "poll", "-i", "0"], r"^polling "),
    "profile-99": (["profile", "-F", "99"], r"^tracing "),
    "profile-999": (["profile", "-F", "999"], r"^tracing "),
    # the recorder at profile-99's rate, its captures (none without a trigger) in the workdir
    "record-99": (["record", "-F", "99", "-o", "{workdir}/captures"], r"^tracing "),
    # the same with the transactions and statements from the USDT probes (a trap each)
    # instead of PgBackendStatus read at the switch-outs
    "record-99-usdt": (["record", "-F", "99", "--usdt", "-o", "{workdir}/captures"],
                       r"^tracing "),
    # the timeline at profile-99's rate, both ways
    "timeline-99": (["profile", "--timeline", "-F", "99"], r"^tracing "),
    "timeline-99-usdt": (["profile", "--timeline", "-F", "99", "--usdt"], r"^tracing "),
    # without the statements' spans: what reading their texts and writing them costs
    "timeline-99-nostmt": (["profile", "--timeline", "-F", "99", "--no-statements"],
                           r"^tracing "),
    "wait": (["wait"], r"^tracing "),
    "wait-empty": (["wait", "--empty-program"], r"^tracing "),
    # the transaction state and statements from the USDT probes (a trap each), as
    # before PgBackendStatus was read at the switches
    "wait-usdt": (["wait", "--usdt"], r"^tracing "),
    "serve": (["serve", "--listen", "127.0.0.1:0"], r"^serving http://"),
    "serve-no-bpf-stats": (["serve", "--listen", "127.0.0.1:0", "--no-bpf-stats"],
                           r"^serving http://"),
}
DEFAULT_COMMANDS = ("tps,latency-query,count-tx,stat-query,watch-xid-trap,watch-xid-poll,"
                    "profile-99,profile-999,wait,serve")

# TPS ratio goal per command (None: none set; the doc says what it costs)
RATIO_GOAL = {"tps": 0.97, "latency-query": 0.97, "latency-query-usdt": 0.97, "count-tx": 0.97,
              "stat-query": 0.97, "stat-query-usdt": 0.97,
              "watch-xid-poll": 0.995, "profile-99": 0.99, "wait": 0.97, "wait-usdt": 0.97,
              "serve": 0.97,
              "serve-no-bpf-stats": 0.97}
# Commands that run nothing in the server (no probe, no program: they read its memory
# from outside): all they can take from it is the CPU they take from the machine. Had
# every ns of the tracer's CPU in a traced window been the server's or pgbench's, they
# would have done (S + P) / (S + P + T) of their work: the TPS ratio's floor that the
# tracer's own CPU implies, which resolves a goal that pairs of TPS cannot (a
# half-percent goal under swings of tens of percent). Its goal is held against the
# lowest pair's floor; with --diag, a program of it that ran voids the premise.
CPU_ONLY = ("watch-xid-poll",)
# commands whose added CPU per transaction is held against 2 x the predicted cost
PROBE_GOAL = ("tps", "latency-query", "latency-query-usdt", "count-tx", "stat-query",
              "watch-xid-trap")


def read(path):
    with open(path) as f:
        return f.read()


def thread_sum(pid, name, value):
    """value(text) of /proc/pid/task/*/name summed over pid's threads; None if pid is gone
    (a thread that exits meanwhile counts nothing)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    total = 0
    for t in tids:
        try:
            total += value(read(f"/proc/{pid}/task/{t}/{name}"))
        except (OSError, ValueError, IndexError):
            pass
    return total


def task_cpu_ns(pid):
    """ns on the CPU of every thread of pid (schedstat's first field), None if gone."""
    return thread_sum(pid, "schedstat", lambda text: int(text.split()[0]))


def task_switches(pid):
    """Context switches of every thread of pid, voluntary or not; 0 if gone."""
    return thread_sum(pid, "status", lambda text: sum(
        int(line.split()[1]) for line in text.splitlines()
        if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")))) or 0


def cluster_pids(postmaster):
    """The postmaster and its children (every server process of the cluster)."""
    try:
        kids = [int(x) for x in read(f"/proc/{postmaster}/task/{postmaster}/children").split()]
    except OSError:
        kids = []
    return [postmaster] + kids


def machine_cpu():
    """Jiffies of every CPU together, from /proc/stat: (busy at nice <= 0, busy at a
    positive nice, stolen by the hypervisor, all)."""
    f = [int(x) for x in read("/proc/stat").splitlines()[0].split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = f
    return user + system + irq + softirq, nice, steal, sum(f)


def snapshot(postmaster, pgbench_pid, tracer_pid, progs=None):
    """Every figure of one moment, read in a few ms; progs: {prog id: fdinfo path} of
    the tracer's programs, whose run counts and times are read at the same moment."""
    t_start = time.time()
    procs = {}
    for p in cluster_pids(postmaster):
        c = task_cpu_ns(p)
        if c is not None:
            try:
                title = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
            except OSError:
                title = "?"
            procs[p] = (c, task_switches(p), title.strip("\0"))
    s = {
        "procs": procs,
        "pgbench": task_cpu_ns(pgbench_pid) or 0,
        "tracer": (task_cpu_ns(tracer_pid) or 0) if tracer_pid else 0,
        "machine": machine_cpu(),
        "load1": float(read("/proc/loadavg").split()[0]),
        "progs": {},
    }
    s["t"] = (t_start + time.time()) / 2
    # The run counts have moments of their own, between t_progs[0] and t_progs[1]: on a
    # loaded machine the reads above can take a tenth of a second, and the counts read
    # after them were set against the transactions of a window shifted by half of that.
    t_progs = time.time()
    for i, path in (progs or {}).items():
        try:
            text = read(path)
            s["progs"][i] = tuple(int(re.search(rf"^{k}:\s*(\d+)", text, re.M).group(1))
                                  for k in ("run_cnt", "run_time_ns"))
        except (OSError, AttributeError):
            pass
    s["t_progs"] = (t_progs, time.time())
    return s


def window(s0, s1):
    """Server CPU and switches between two snapshots; processes new in the window count
    from zero, processes gone before its end are reported (their last part is lost)."""
    cpu = sw = 0
    for p, (c, n, _) in s1["procs"].items():
        c0, n0, _ = s0["procs"].get(p, (0, 0, ""))
        cpu += c - c0
        sw += n - n0
    gone = [v[2] for p, v in s0["procs"].items() if p not in s1["procs"]]
    m = [b - a for a, b in zip(s0["machine"], s1["machine"])]
    return cpu, sw, gone, [x / max(1, m[3]) for x in m[:3]]


class BpfStats:
    """The kernel's BPF run-time statistics, on while this object is open
    (BPF_ENABLE_STATS: reference counted, off again when the last fd closes)."""

    def __init__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(8)  # enable_stats.type = BPF_STATS_RUN_TIME (0)
        self.fd = libc.syscall(321, 32, attr, 8)  # __NR_bpf (x86-64), BPF_ENABLE_STATS
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")

    def close(self):
        os.close(self.fd)


def tracer_progs(pid):
    """BPF programs held by pid and its children: {prog id: its /proc/PID/fdinfo/FD}."""
    progs = {}
    pids = [pid]
    try:
        pids += [int(x) for x in read(f"/proc/{pid}/task/{pid}/children").split()]
    except OSError:
        pass
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fdinfo")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{p}/fdinfo/{fd}"
            try:
                m = re.search(r"^prog_id:\s*(\d+)", read(path), re.M)
            except OSError:
                continue
            if m:
                progs.setdefault(int(m.group(1)), path)
    return progs


def prog_names(ids):
    """{id: (name, type)} from bpftool."""
    if not ids:
        return {}
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    try:
        progs = json.loads(out.stdout)
    except ValueError:
        return {}
    return {p["id"]: (p.get("name", "?"), p.get("type", "?")) for p in progs if p["id"] in ids}


class Tracer:
    """A dbtap command attached to the cluster for the length of one run."""

    def __init__(self, name, pgdata, workdir):
        self.name = name
        args, self.ready = command_of(name)
        self.argv = [x.replace("{workdir}", workdir) for x in args] + ["--pg", pgdata]
        self.out = os.path.join(workdir, f"{name}.out")
        self.err = os.path.join(workdir, f"{name}.err")
        self.proc = None
        self.scraper = None
        self.scrapes = 0
        self.stop_scraping = threading.Event()

    def start(self):
        with open(self.out, "w") as o, open(self.err, "w") as e:
            self.proc = subprocess.Popen(self.argv, stdout=o, stderr=e)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = read(self.err)
            m = re.search(self.ready, text, re.M)
            if m:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name}: exited {self.proc.returncode} before it "
                                   f"attached: {text.strip()}")
            time.sleep(0.02)
        else:
            self.stop()
            raise RuntimeError(f"{self.name}: not attached after 60 s: {read(self.err).strip()}")
        if self.name.startswith("serve"):
            m = re.search(r"^serving http://([^/]+)/metrics", read(self.err), re.M)
            self.scraper = threading.Thread(target=self.scrape, args=(m.group(1),), daemon=True)
            self.scraper.start()

    def scrape(self, addr):
        """A scraper as Prometheus is one: GET /metrics every second."""
        host, port = addr.rsplit(":", 1)
        while not self.stop_scraping.is_set():
            try:
                c = http.client.HTTPConnection(host, int(port), timeout=5)
                c.request("GET", "/metrics")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    self.scrapes += 1
            except OSError:
                pass
            self.stop_scraping.wait(1.0)

    def stop(self):
        self.stop_scraping.set()
        if self.scraper:
            self.scraper.join()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        if rc != 0:
            raise RuntimeError(f"{self.name}: exited {rc}: {read(self.err).strip()[-500:]}")


WORKLOADS = {
    # every transaction assigns an XID (watch xid counts one write each) and is one
    # statement: the most transactions per second, so the probes' share is the largest
    "txid": ["-f", "txid.sql"],
    "select": ["-S"],
    "tpcb": [],
}

# --builtin NAME: pgbench's own script of that name (-b NAME), on its initialised tables;
# the TPC-B-like one is seven statements per transaction (BEGIN, three UPDATEs, a SELECT,
# an INSERT, END), so a probe per statement fires seven times for each transaction probe
BUILTINS = ("tpcb-like", "simple-update", "select-only")


def client_backends(postmaster):
    """Children of the postmaster serving a client (the cluster listens on its socket
    only: their titles say "[local]")."""
    pids = []
    for p in cluster_pids(postmaster)[1:]:
        try:
            if b"[local]" in open(f"/proc/{p}/cmdline", "rb").read():
                pids.append(p)
        except OSError:
            pass
    return pids


def sockets(pid):
    """How many sockets pid holds (pgbench: one per open connection)."""
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            except OSError:
                pass
    except OSError:
        pass
    return n


def settle(postmaster, timeout=10.0):
    """Waits until the backends of earlier clients have exited: a process that exits
    within a window takes the last part of its CPU time with it."""
    deadline = time.monotonic() + timeout
    while client_backends(postmaster) and time.monotonic() < deadline:
        time.sleep(0.02)


class Late(Exception):
    """The window was not all steady load: the run is made again."""

    def __init__(self, why, transactions):
        super().__init__(why)
        self.transactions = transactions  # pgbench's count of the discarded run


def pgbench_run(a, workdir, tracer=None, diag_ids=False):
    """One run; returns its figures (see the top of this file)."""
    settle(a.pg_pid)
    logdir = os.path.join(workdir, "log")
    os.makedirs(logdir, exist_ok=True)
    for f in os.listdir(logdir):
        os.unlink(os.path.join(logdir, f))
    # pgbench's -T counts whole seconds from after its connections: past the window
    total_s = math.ceil(a.warm + a.secs + 0.3)
    cmd = (["pgbench", "-n", "-c", str(a.clients), "-j", str(a.threads), "-T", str(total_s),
            "-l", "--log-prefix", os.path.join(logdir, "tx")] +
           (["-b", a.builtin] if a.builtin else WORKLOADS[a.workload]))
    t_start = time.time()
    pgb = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    tpid = tracer.proc.pid if tracer else None
    progs = tracer_progs(tpid) if diag_ids else None
    names = prog_names(progs) if progs else {}
    time.sleep(max(0.0, t_start + a.warm - time.time()))
    # pgbench's first connection (it asks the server a few things) is closed, its
    # backend has exited, and every client is connected: from here on the same
    # processes until pgbench ends
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if (sockets(pgb.pid) == a.clients and
                len(client_backends(a.pg_pid)) == a.clients):
            break
        time.sleep(0.01)
    s0 = snapshot(a.pg_pid, pgb.pid, tpid, progs)
    perf = perf_start(client_backends(a.pg_pid), workdir) if diag_ids and a.perf else None
    time.sleep(max(0.0, s0["t"] + a.secs - time.time()))
    s1 = snapshot(a.pg_pid, pgb.pid, tpid, progs)
    # pgbench, or one of its connections, ended before the window did
    late = pgb.poll() is not None
    shares = perf_stop(perf) if perf else None  # perf script takes seconds
    out, err = pgb.communicate()
    if pgb.returncode != 0:
        raise RuntimeError(f"pgbench exited {pgb.returncode}: {err.strip()[-500:]}")
    m = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
    reported = int(m.group(1)) if m else None
    logged = in_window = 0
    # transactions between the readings of the run counts: surely (ended after the
    # first was done, before the second began), possibly (the widest window), midway
    progs_tx = [0, 0, 0]
    p0, p1 = s0["t_progs"], s1["t_progs"]
    for f in os.listdir(logdir):
        with open(os.path.join(logdir, f)) as fh:
            for line in fh:
                x = line.split()
                logged += 1
                t = int(x[4]) + int(x[5]) / 1e6  # end of the transaction
                if s0["t"] <= t < s1["t"]:
                    in_window += 1
                progs_tx[0] += p0[1] <= t < p1[0]
                progs_tx[1] += p0[0] <= t < p1[1]
                progs_tx[2] += sum(p0) / 2 <= t < sum(p1) / 2
    if reported != logged:
        raise RuntimeError(f"pgbench reported {reported} transactions, its log has {logged}")
    cpu, sw, gone, (busy, nice, steal) = window(s0, s1)
    if late or gone:
        raise Late("pgbench ended before the second reading" if late else
                   f"{len(gone)} server process(es) exited within the window: {gone}", reported)
    dt = s1["t"] - s0["t"]
    n = max(1, in_window)
    pgb_cpu = s1["pgbench"] - s0["pgbench"]
    tracer_cpu = s1["tracer"] - s0["tracer"]
    ncpu = os.cpu_count()
    r = {
        "pgbench_transactions": reported, "logged_transactions": logged,
        "window_s": dt, "transactions": in_window, "tps": in_window / dt,
        "cpu_ns_per_tx": cpu / n, "switches_per_tx": sw / n, "processes_gone": len(gone), "gone": gone,
        "pgbench_cpu_ns_per_tx": pgb_cpu / n, "tracer_cpu_pct": tracer_cpu / dt / 1e7,
        "server_cpu_ns": cpu, "pgbench_cpu_ns": pgb_cpu, "tracer_cpu_ns": tracer_cpu,
        # of all CPUs: busy at nice <= 0, the part of it that is not this run's
        # server, pgbench or tracer (other jobs), positive nice (yields to us), steal
        "machine_busy_pct": 100 * busy,
        "others_pct": max(0.0, 100 * busy - (cpu + pgb_cpu + tracer_cpu) / (dt * ncpu) / 1e7),
        "nice_pct": 100 * nice, "steal_pct": 100 * steal, "load1": s1["load1"],
    }
    backend_cpu = sum(c - s0["procs"][p][0] for p, (c, _, t) in s1["procs"].items()
                      if "[local]" in t and p in s0["procs"])
    r["backend_cpu_ns_per_tx"] = backend_cpu / n
    if shares:
        r["perf"] = shares
    if diag_ids:
        # Each client runs one transaction at a time: the probes of its transaction i
        # fire after pgbench logged i - 1 and before it logs i, so the runs of a
        # program that fires k times a transaction lie within k x (these counts -/+
        # one per client)
        r["programs_transactions_min"], r["programs_transactions_max"] = progs_tx[:2]
        n = max(1, progs_tx[2])
        r["programs"] = []
        for i, (cnt, ns) in sorted(s1["progs"].items()):
            c0, n0 = s0["progs"].get(i, (0, 0))
            name, typ = names.get(i, ("?", "?"))
            runs = cnt - c0
            r["programs"].append({"id": i, "name": name, "type": typ, "runs": runs,
                                  "runs_per_tx": runs / n,
                                  "ns_per_run": (ns - n0) / runs if runs else 0.0})
    return r


def perf_start(pids, workdir):
    """perf record of the client backends' CPU (cpu-clock: no PMU needed), or None."""
    out = os.path.join(workdir, "diag.perf")
    try:
        p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-g",
                              "-p", ",".join(map(str, pids)), "-o", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as e:
        print(f"  --perf: {e}", file=sys.stderr)
        return None
    return p, out


PERF_KINDS = ("trap_kernel", "trap_bpf", "debug_exception", "bpf_other", "rest")


def perf_stop(perf):
    """Stops perf and puts each sample where its stack says (see the top of this file):
    {kind: share of the samples}, and the sample count."""
    p, path = perf
    p.send_signal(signal.SIGINT)
    p.wait()
    out = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym"],
                         capture_output=True, text=True).stdout
    n = 0
    c = dict.fromkeys(PERF_KINDS, 0)
    for block in out.split("\n\n"):
        syms = [(l.split(None, 1) + ["?"])[1] for l in block.strip().splitlines() if l.strip()]
        if not syms:
            continue
        n += 1
        bpf = any(x.startswith("bpf_prog_") for x in syms)
        if "asm_exc_int3" in syms:
            c["trap_bpf" if bpf else "trap_kernel"] += 1
        elif "asm_exc_debug" in syms:
            c["debug_exception"] += 1
        elif bpf:
            c["bpf_other"] += 1
        else:
            c["rest"] += 1
    os.unlink(path)
    return {"samples": n, **{k: v / max(1, n) for k, v in c.items()}}


def run_one(a, workdir, name, diag=False):
    """One run, made again (at most 3 times) when its window was not all steady load:
    pgbench's first connection still open, or its end, inside the window (on a busy
    machine with short windows)."""
    discarded = 0
    for attempt in range(1, 4):
        try:
            r = run_once(a, workdir, name, diag)
            r["attempts"] = attempt
            r["discarded_transactions"] = discarded
            return r
        except Late as e:
            discarded += e.transactions
            print(f"  run repeated ({name or 'untraced'}): {e}", file=sys.stderr, flush=True)
    raise RuntimeError(f"{name or 'untraced'}: 3 runs without a steady window")


def run_once(a, workdir, name, diag):
    if name is None:
        return pgbench_run(a, workdir)
    t = Tracer(name, a.pgdata, workdir)
    stats = BpfStats() if diag else None
    t.start()
    try:
        r = pgbench_run(a, workdir, t, diag_ids=diag)
    finally:
        t.stop()
        if stats:
            stats.close()
    if t.scraper:
        r["scrapes"] = t.scrapes
    return r


def probe_costs():
    """ns per hit over the baseline, and the handler's own ns per run, of a USDT site
    and a watchpoint, from `dbtap bench` on this machine now."""
    out = subprocess.run([DBTAP, "bench", "usdt", "watchpoint", "-r", "5", "-d", "0.2", "-j"],
                         capture_output=True, text=True)
    costs = {}
    for line in out.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("report") == "row" and r.get("program") == "handler" and r.get("available"):
            costs[r["mechanism"]] = (r["ns_over_baseline"], r.get("prog_ns") or 0.0)
    return costs


def predicted_ns(programs, costs):
    """What the programs should cost per transaction: runs x (the mechanism's trap,
    measured by dbtap bench without its handler's own run time, + the program's own
    run time). USDT and uprobe programs trap like a USDT site; perf-event programs of
    watch are breakpoints; the rest (timers, tracepoints) only their own run time."""
    total = 0.0
    for p in programs:
        trap = 0.0
        if p["type"] == "kprobe" and "usdt" in costs:
            trap = costs["usdt"][0] - costs["usdt"][1]
        elif p["type"] == "perf_event" and p["name"] == "on_hit" and "watchpoint" in costs:
            trap = costs["watchpoint"][0] - costs["watchpoint"][1]
        total += p["runs_per_tx"] * (trap + p["ns_per_run"])
    return total


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(name, pairs, diag, costs, base=None):
    ratios = [t["tps"] / u["tps"] for u, t in pairs]
    added = [t["cpu_ns_per_tx"] - u["cpu_ns_per_tx"] for u, t in pairs]
    row = {
        "command": name, "argv": " ".join(command_of(name)[0][1:]), "pairs": len(pairs),
        "tps_ratio": med(ratios), "tps_ratio_min": min(ratios), "tps_ratio_max": max(ratios),
        "untraced_tps": med([u["tps"] for u, _ in pairs]),
        "traced_tps": med([t["tps"] for _, t in pairs]),
        "untraced_cpu_ns_per_tx": med([u["cpu_ns_per_tx"] for u, _ in pairs]),
        "traced_cpu_ns_per_tx": med([t["cpu_ns_per_tx"] for _, t in pairs]),
        "added_ns_per_tx": med(added), "added_ns_min": min(added), "added_ns_max": max(added),
        "untraced_switches_per_tx": med([u["switches_per_tx"] for u, _ in pairs]),
        "traced_switches_per_tx": med([t["switches_per_tx"] for _, t in pairs]),
        "pgbench_cpu_ns_per_tx": med([x["pgbench_cpu_ns_per_tx"] for p in pairs for x in p]),
        "tracer_cpu_pct": med([t["tracer_cpu_pct"] for _, t in pairs]),
        "machine_busy_pct": med([x["machine_busy_pct"] for p in pairs for x in p]),
        "others_pct": med([x["others_pct"] for p in pairs for x in p]),
        "nice_pct": med([x["nice_pct"] for p in pairs for x in p]),
        "steal_pct": med([x["steal_pct"] for p in pairs for x in p]),
        "load1": med([x["load1"] for p in pairs for x in p]),
        "predicted_ns_per_tx": None, "programs": None, "perf": None, "perf_ns_per_tx": None,
    }
    if diag:
        row["programs"] = diag["programs"]
        if diag.get("perf"):
            # the probe's parts per transaction, from the diag run's own samples
            row["perf"] = diag["perf"]
            row["perf_ns_per_tx"] = {k: diag["perf"][k] * diag["backend_cpu_ns_per_tx"]
                                     for k in PERF_KINDS}
        if costs:
            row["predicted_ns_per_tx"] = predicted_ns(diag["programs"], costs)
    if base:
        # the goals are against no tracer; the other command's programs beside this one's
        row["versus"] = base
        row["goal"] = "-"
        return row
    goals = []
    g = RATIO_GOAL.get(name.partition("@")[0])
    if name.partition("@")[0] in CPU_ONLY:
        floors = [1 - t["tracer_cpu_ns"] / max(1, t["server_cpu_ns"] + t["pgbench_cpu_ns"] +
                                                t["tracer_cpu_ns"]) for _, t in pairs]
        row["cpu_floor_ratio"], row["cpu_floor_min"] = med(floors), min(floors)
        row["cpu_floor_premise"] = not (diag and any(p["runs"] for p in diag["programs"]))
    if g is not None and row.get("cpu_floor_premise"):
        goals.append("met" if row["cpu_floor_min"] >= g else "missed")
    elif g is not None:
        goals.append("met" if row["tps_ratio"] >= g else
                     "within spread" if row["tps_ratio_max"] >= g else "missed")
    if name == "profile-99":
        ok = row["added_ns_per_tx"] <= 0.01 * row["untraced_cpu_ns_per_tx"]
        goals.append("met" if ok else "missed")
    if name in PROBE_GOAL and row["predicted_ns_per_tx"]:
        goals.append("met" if row["added_ns_per_tx"] <= 2 * row["predicted_ns_per_tx"] else
                     "missed")
    row["goal"] = ("missed" if "missed" in goals else "within spread" if "within spread" in goals
                   else "met" if goals else "-")
    return row


def print_table(rows, a, costs, extra=()):
    extra = list(extra)
    print(f"\n{a.workload} workload, pgbench -c {a.clients} -j {a.threads}, {a.pairs} pairs "
          f"of {a.secs:g} s per command; {os.cpu_count()} cpus, Linux {os.uname().release}")
    if costs:
        print("dbtap bench now: " + ", ".join(f"{k} {v[0]:.0f} ns/hit (handler {v[1]:.0f} ns)"
                                               for k, v in sorted(costs.items())))
    if a.versus:
        print(f"the other side of every pair is {a.versus}, not untraced: \"un\" columns "
              f"are {a.versus}'s, ratios and added ns the command's over it")
    hdr = ("command", "tps ratio", "min-max", "cpu/tx un", "cpu/tx tr", "added ns",
           "added min-max", "predicted", "cs/tx un>tr", "pgb cpu/tx", "tracer%", "others%",
           "nice%", "load", "goal")
    fmt = "%-19s %9s %13s %10s %10s %9s %15s %9s %11s %10s %7s %7s %5s %5s %s"
    print(fmt % hdr)
    for r in rows:
        pred = "-" if r["predicted_ns_per_tx"] is None else "%.0f" % r["predicted_ns_per_tx"]
        print(fmt % (r["command"], "%.3f" % r["tps_ratio"],
                     "%.3f-%.3f" % (r["tps_ratio_min"], r["tps_ratio_max"]),
                     "%.0f" % r["untraced_cpu_ns_per_tx"], "%.0f" % r["traced_cpu_ns_per_tx"],
                     "%+.0f" % r["added_ns_per_tx"],
                     "%+.0f..%+.0f" % (r["added_ns_min"], r["added_ns_max"]), pred,
                     "%.2f>%.2f" % (r["untraced_switches_per_tx"], r["traced_switches_per_tx"]),
                     "%.0f" % r["pgbench_cpu_ns_per_tx"], "%.1f" % r["tracer_cpu_pct"],
                     "%.0f" % r["others_pct"], "%.0f" % r["nice_pct"], "%.1f" % r["load1"],
                     r["goal"]))
    for r in rows:
        if "cpu_floor_ratio" not in r:
            continue
        if not r["cpu_floor_premise"]:
            print(f"  {r['command']}: a program of it ran in the server: no floor from its CPU")
            continue
        g = RATIO_GOAL.get(r["command"].partition("@")[0])
        print(f"  {r['command']}: runs nothing in the server; its own CPU ({r['tracer_cpu_pct']:.2f} % "
              f"of one core), were all of it the server's and pgbench's, leaves them a TPS ratio of "
              f"at least {r['cpu_floor_ratio']:.4f} (lowest pair {r['cpu_floor_min']:.4f})" +
              (f": goal {g} {'met' if r['cpu_floor_min'] >= g else 'missed'} by that floor"
               if g is not None else ""))
    for r in rows + extra:
        if r["programs"]:
            print(f"  {r['command']}: " + "; ".join(
                f"{p['name']} ({p['type']}) {p['runs_per_tx']:.2f} runs/tx {p['ns_per_run']:.0f} ns/run"
                for p in r["programs"] if p["runs_per_tx"] > 0 or p["ns_per_run"] > 0))
        if r.get("perf"):
            print(f"  {r['command']}: perf, {r['perf']['samples']} samples of the backends: " +
                  "; ".join(f"{k} {100 * r['perf'][k]:.1f}% {r['perf_ns_per_tx'][k]:.0f} ns/tx"
                            for k in PERF_KINDS if k != "rest" and r["perf"][k] > 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg-pid", type=int, required=True)
    ap.add_argument("--pgdata", required=True)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--warm", type=float, default=1.5)
    ap.add_argument("--commands", default=DEFAULT_COMMANDS)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="txid")
    ap.add_argument("--builtin", default="")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--diag", nargs="?", const="all", default="")
    ap.add_argument("--probe-cost", action="store_true")
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--versus")
    ap.add_argument("--build", action="append", default=[])
    a = ap.parse_args()
    for b in a.build:
        label, eq, binary = b.partition("=")
        if not eq or not label or not os.access(binary, os.X_OK):
            print(f"error: bad --build '{b}'\nhint: LABEL=BINARY, an executable dbtap",
                  file=sys.stderr)
            sys.exit(2)
        BUILDS[label] = os.path.abspath(binary)
    names = [c for c in a.commands.split(",") if c]
    if a.versus in names:
        print(f"error: --versus {a.versus} is also in --commands\n"
              "hint: a command is compared with another one, or with no tracer",
              file=sys.stderr)
        sys.exit(2)
    for c in names + ([a.versus] if a.versus else []):
        base, at, build = c.partition("@")
        if at and build not in BUILDS:
            print(f"error: '{c}' names no --build '{build}'\nhint: --build {build}=BINARY",
                  file=sys.stderr)
            sys.exit(2)
        if base not in COMMANDS:
            print(f"error: unknown command '{c}'\nhint: one of {', '.join(COMMANDS)}",
                  file=sys.stderr)
            sys.exit(2)
    # perf is not among the packages `make deps` installs: say so before any run
    if a.perf and not shutil.which("perf"):
        print("error: --perf needs perf, which is not installed (not found in PATH)\n"
              "hint: apt-get install linux-perf, or leave --perf out", file=sys.stderr)
        sys.exit(1)
    if a.builtin and a.builtin not in BUILTINS:
        print(f"error: unknown pgbench built-in script '{a.builtin}'\n"
              f"hint: one of {', '.join(BUILTINS)}", file=sys.stderr)
        sys.exit(2)
    if a.builtin:
        a.workload = a.builtin  # what the table, the rows and the JSON call it
    with open(os.path.join(a.workdir, "txid.sql"), "w") as f:
        f.write("SELECT txid_current();\n")
    js = open(a.json, "w") if a.json else None

    def emit(obj):
        if js:
            js.write(json.dumps(obj) + "\n")
            js.flush()

    costs = probe_costs() if a.probe_cost else {}
    emit({"report": "config", "workload": a.workload, "builtin": a.builtin or None,
          "clients": a.clients,
          "threads": a.threads, "pairs": a.pairs, "secs": a.secs, "warm": a.warm,
          "cpus": os.cpu_count(), "kernel": os.uname().release, "probe_costs": costs,
          "versus": a.versus,
          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())})
    pairs = {c: [] for c in names}
    base = a.versus  # None: untraced
    for i in range(a.pairs):
        for c in names:
            order = [base, c] if i % 2 == 0 else [c, base]
            res = {}
            for m in order:
                res[m] = run_one(a, a.workdir, m)
                emit({"report": "run", "command": c, "pair": i + 1,
                      "traced": m is not None, **({"side": m} if base else {}), **res[m]})
            pairs[c].append((res[base], res[c]))
            print(f"  pair {i + 1} {c}: tps {res[base]['tps']:.0f} -> {res[c]['tps']:.0f} "
                  f"({res[c]['tps'] / res[base]['tps']:.3f}), cpu/tx "
                  f"{res[base]['cpu_ns_per_tx']:.0f} -> {res[c]['cpu_ns_per_tx']:.0f} ns, "
                  f"load {res[c]['load1']:.1f}", flush=True)
    diag = {}
    if a.diag:
        known = names + ([base] if base else [])
        for c in known if a.diag == "all" else [c for c in a.diag.split(",") if c in known]:
            diag[c] = run_one(a, a.workdir, c, diag=True)
            emit({"report": "diag", "command": c, **diag[c]})
    rows = [summarize(c, pairs[c], diag.get(c), costs, base) for c in names]
    for r in rows:
        emit({"report": "row", **r})
    extra = []
    if base and base in diag:
        extra.append({"command": base, "programs": diag[base]["programs"]})
    print_table(rows, a, costs, extra)


if __name__ == "__main__":
    main()
