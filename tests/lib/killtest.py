#!/usr/bin/env python3
# tests/lib/killtest.py: SIGKILLs a tracer at random moments and checks that it left nothing.
#
#   killtest.py --kills N --postmaster PID --funcs PAT[,PAT] [--seed S] [--min-teardown M]
#               -- CMD... [-- CMD...]...
#
# Each CMD is a whole dbtap command line (a unique binary name, so that its processes,
# the ones it forks included, are found by their comm). Kill i runs CMD i mod len,
# with a -d short enough that most runs reach their teardown, and SIGKILLs it:
#   attach   (25 %) at a random moment between exec and its "tracing" line
#   tracing  (15 %) at a random moment while it traces
#   teardown (60 %) 0-40 ms after its final report, while it releases its probes
# (the phase reported is the one it was really in: an attach kill after a quick
# start-up lands while it traces, a teardown kill after a quick exit finds it gone).
# With --min-teardown M, teardown kills go on after the N, the commands in turn, until M
# of them have landed in a teardown (at most N more): the draw alone cannot promise it.
# After each kill, once every process
# of that binary is gone (reaped: this script is their subreaper): every BPF object it held (its fdinfo and its children's, read
# just before the kill) is gone; in every process of the cluster each USDT semaphore is
# back to its value before and each probe site (USDT sites, entries of --funcs) holds the
# file's byte; the kernel log has no new "leaking uprobe" line; for a command with
# "watch", the free hardware breakpoint slots are back to the count before it ran.
# A watch run refused because other tools hold every breakpoint slot is tried again.
# Prints one line per kill and "ok N kills (attach A, tracing T, teardown D)" at the end;
# exit status 1 on the first failure, naming it.
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probesites  # noqa: E402

READY = re.compile(r"^(tracing|counting|watching) ")
REPORT = re.compile(r'"report": ?"summary"')


def parse_args(argv):
    o = {"kills": 20, "seed": None, "funcs": [], "cmds": [], "min_teardown": 0}
    while argv and argv[0] != "--":
        k, v = argv[0], argv[1]
        argv = argv[2:]
        if k == "--kills":
            o["kills"] = int(v)
        elif k == "--postmaster":
            o["postmaster"] = int(v)
        elif k == "--funcs":
            o["funcs"] = v.split(",")
        elif k == "--seed":
            o["seed"] = int(v)
        elif k == "--min-teardown":
            o["min_teardown"] = int(v)
    cur = None
    for a in argv:
        if a == "--":
            cur = []
            o["cmds"].append(cur)
        else:
            cur.append(a)
    o["cmds"] = [c for c in o["cmds"] if c]
    return o


def cluster_pids(postmaster):
    try:
        with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
            return [postmaster] + [int(x) for x in f.read().split()]
    except OSError:
        return [postmaster]


def sites_state(postmaster, funcs):
    out = {}
    for pid in cluster_pids(postmaster):
        try:
            out[pid] = probesites.look(pid, funcs)
        except (OSError, ValueError, EOFError):
            pass  # a backend that just exited
    return out


def reap_orphans():
    """Reaps the tracer's children that were reparented here (see main: subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def procs_named(comm):
    reap_orphans()
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == comm:
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def bpf_ids(pid):
    """(kind, id) of every BPF object pid and its children hold."""
    ids = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(x) for x in f.read().split()]
            for fd in os.listdir(f"/proc/{p}/fdinfo"):
                with open(f"/proc/{p}/fdinfo/{fd}") as f:
                    for line in f:
                        m = re.match(r"(prog|map|link)_id:\s*(\d+)$", line)
                        if m:
                            ids.add((m.group(1), int(m.group(2))))
        except OSError:
            pass
    return ids


def bpf_existing():
    have = set()
    for kind in ("prog", "map", "link"):
        r = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True, text=True)
        for o in json.loads(r.stdout or "[]"):
            have.add((kind, o["id"]))
    return have


def leak_lines():
    r = subprocess.run(["dmesg"], capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if "leaking uprobe" in l]


def slots_free():
    lib = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(["perl", f"{lib}/bpslots.pl"], capture_output=True, text=True)
    return int(r.stdout.split()[0])


def wait_until(cond, seconds):
    end = time.monotonic() + seconds
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


def one_kill(cmd, phase, rng):
    """Runs cmd, kills it in phase; returns (real phase, bpf ids, stderr tail)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    bufs = {p.stdout.fileno(): b"", p.stderr.fileno(): b""}
    fds = list(bufs)
    ready = report = None
    kill_at = t0 + rng.uniform(0, 0.25) if phase == "attach" else None
    errtail = []
    ids = set()
    real = None
    while fds:
        now = time.monotonic()
        timeout = 0.5 if kill_at is None else max(0.0, kill_at - now)
        rl, _, _ = select.select(fds, [], [], timeout)
        now = time.monotonic()
        for fd in rl:
            data = os.read(fd, 65536)
            if not data:
                fds.remove(fd)
                continue
            bufs[fd] += data
            *lines, bufs[fd] = bufs[fd].split(b"\n")
            for raw in lines:
                s = raw.decode(errors="replace")
                if fd == p.stderr.fileno():
                    errtail = (errtail + [s])[-5:]
                if ready is None and READY.search(s):
                    ready = now
                    if phase == "tracing":
                        kill_at = now + rng.uniform(0, 0.15)
                if report is None and REPORT.search(s):
                    report = now
                    if phase == "teardown":
                        kill_at = now + rng.uniform(0, 0.04)
        if kill_at is not None and time.monotonic() >= kill_at:
            ids = bpf_ids(p.pid)
            real = "attach" if ready is None else "tracing" if report is None else "teardown"
            if p.poll() is not None:
                real = "exited"  # it ended by itself first (poll reaped it)
            else:
                os.kill(p.pid, signal.SIGKILL)
            break
        if time.monotonic() - t0 > 60:
            os.kill(p.pid, signal.SIGKILL)
            raise SystemExit(f"error: {cmd[0]} neither attached nor ended in 60 s: {errtail}")
    p.stdout.close()
    p.stderr.close()
    rc = p.wait()
    if real is None:
        real = "exited"
    return real, ids, rc, errtail


def become_subreaper():
    """
    The killed tracer's children (its releasing processes) are reparented to this
    process, which reaps them as they exit: "gone" then means reaped, at once, instead
    of a zombie until the machine's init gets round to it.
    """
    import ctypes
    PR_SET_CHILD_SUBREAPER = 36
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"error: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def main():
    o = parse_args(sys.argv[1:])
    become_subreaper()
    rng = random.Random(o["seed"])
    base = sites_state(o["postmaster"], o["funcs"])
    pm = base.get(o["postmaster"])
    if not pm:
        raise SystemExit(f"error: postmaster {o['postmaster']} cannot be read")
    leaks0 = len(leak_lines())
    counts = {"attach": 0, "tracing": 0, "teardown": 0, "exited": 0}
    i = 0
    while i < o["kills"] or (counts["teardown"] < o["min_teardown"] and i < 2 * o["kills"]):
        cmd = o["cmds"][i % len(o["cmds"])]
        comm = os.path.basename(cmd[0])[:15]
        phase = (rng.choices(["attach", "tracing", "teardown"], [25, 15, 60])[0]
                 if i < o["kills"] else "teardown")
        for attempt in range(30):
            slots0 = slots_free() if "watch" in cmd else None
            real, ids, rc, err = one_kill(cmd, phase, rng)
            # other tools on this machine may hold every breakpoint slot for a while:
            # that run never attached; the same kill is tried again once one is free
            if not (real == "exited" and rc != 0 and
                    any("no free hardware breakpoint slot" in e for e in err)):
                break
            wait_until(lambda: slots_free() > 0, 10)
        counts[real] += 1
        if real == "exited" and rc != 0:
            raise SystemExit(f"error: kill {i}: {' '.join(cmd[1:])} failed ({rc}): {err}")
        gone = wait_until(lambda: not procs_named(comm), 30)
        if not gone:
            raise SystemExit(f"error: kill {i}: processes of {comm} still run 30 s later")
        left = wait_until(lambda: not (ids & bpf_existing()), 10) or ids & bpf_existing()
        if left is not True:
            raise SystemExit(f"error: kill {i} ({real}): BPF objects left: {sorted(left)}")
        now = sites_state(o["postmaster"], o["funcs"])
        for pid, st in now.items():
            ref = base.get(pid, pm)
            if st["changed"]:
                raise SystemExit(f"error: kill {i} ({real}, {' '.join(cmd[1:])}): "
                                 f"pid {pid} has changed probe sites {st['changed'][:5]}")
            for k, v in st["semaphores"].items():
                if v != ref["semaphores"].get(k):
                    raise SystemExit(f"error: kill {i} ({real}, {' '.join(cmd[1:])}): pid {pid} "
                                     f"semaphore {k} is {v}, was {ref['semaphores'].get(k)}")
        leaks = leak_lines()
        if len(leaks) > leaks0:
            raise SystemExit(f"error: kill {i} ({real}): kernel log: {leaks[-1]}")
        if slots0 is not None:
            back = wait_until(lambda: slots_free() >= slots0, 15)
            if not back:
                raise SystemExit(f"error: kill {i}: {slots_free()} breakpoint slots free, "
                                 f"{slots0} before")
        print(f"kill {i}: {real}: {' '.join(cmd[1:3])}: {len(ids)} BPF objects gone, "
              f"{len(now)} processes clean", flush=True)
        i += 1
    if counts["teardown"] < o["min_teardown"]:
        raise SystemExit(f"error: {counts['teardown']} of {i} kills landed in a teardown, "
                         f"{o['min_teardown']} asked")
    print(f"ok {i} kills (attach {counts['attach']}, tracing {counts['tracing']}, "
          f"teardown {counts['teardown']}, ended before the kill {counts['exited']})")


main()
