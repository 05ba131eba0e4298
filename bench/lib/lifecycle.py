#!/usr/bin/env python3
# bench/lib/lifecycle.py: a tracer's start-up, exit time and peak memory, measured from outside.
#
#   lifecycle.py [--ready RE] [--report RE] [--run S] [--phases] -- CMD ARGS...
#
# Starts CMD, notes when a line matching --ready appears on its stderr or stdout
# (attached), lets it trace for --run seconds, sends SIGINT, notes when a line
# matching --report appears (the final report's last line, or its first when
# --report-first), and when the process has exited. Prints one JSON line:
# {"attach_s", "report_s" (SIGINT -> report), "exit_s" (report -> exit), "stop_s"
# (SIGINT -> exit, for commands without a final report), "rss_kb" (peak), "rc"}; a
# process still there 10 s after the SIGINT is killed, and "killed": true said.
#
# Peak RSS: the kernel carries a process's high-water mark across exec, so a child
# forked from this script would report this script's 10 MB for any smaller program.
# CMD runs under GNU time (/usr/bin/time -f %M, Debian's "time"), a small process whose
# child starts afresh; SIGINT goes to that child. Without it, wait4's ru_maxrss is
# given and "rss_floor_kb" says how much of it may be this script's own. --phases sets
# DBTAP_PHASES and adds "phases": [[name, s since exec, CPU s since exec]...] from
# dbtap's phase marks (util/phase.c; the CPU is its main thread's and its reaped
# children's, which a loaded machine does not inflate).
import json
import os
import re
import select
import signal
import sys
import tempfile
import time

args = sys.argv[1:]
ready, report, run = r"^tracing |^counting|^watching |^Attaching", r'"report": *"summary"|^total over|^@', 1.0
phases = None
while args and args[0] != "--":
    if args[0] == "--phases":
        phases = []
        os.environ["DBTAP_PHASES"] = "1"
        args = args[1:]
        continue
    if args[0] == "--ready":
        ready = args[1]
    elif args[0] == "--report":
        report = args[1]
    elif args[0] == "--run":
        run = float(args[1])
    args = args[2:]
cmd = args[1:]
gnu_time = "/usr/bin/time"
rss_file = None
if os.access(gnu_time, os.X_OK):
    fd, rss_file = tempfile.mkstemp(prefix="lifecycle-rss.")
    os.close(fd)
    cmd = [gnu_time, "-q", "-f", "%M", "-o", rss_file] + cmd
own_rss_kb = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
r_out, w_out = os.pipe()
r_err, w_err = os.pipe()
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(w_out, 1)
    os.dup2(w_err, 2)
    os.execvp(cmd[0], cmd)
os.close(w_out)
os.close(w_err)


def target():
    """The traced program: GNU time's child, once it has one."""
    if rss_file is None:
        return pid
    try:
        kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
        return int(kids[0]) if kids else pid
    except OSError:
        return pid


bufs = {r_out: b"", r_err: b""}
t_ready = t_report = t_int = None
killed = False
KILL_AFTER = 10.0
open_fds = [r_out, r_err]
while open_fds:
    timeout = None
    now = time.monotonic()
    if t_ready is not None and t_int is None:
        timeout = max(0.0, t_ready + run - now)
    elif t_int is not None and not killed:
        timeout = max(0.0, t_int + KILL_AFTER - now)
    rl, _, _ = select.select(open_fds, [], [], timeout)
    now = time.monotonic()
    if t_ready is not None and t_int is None and now >= t_ready + run:
        os.kill(target(), signal.SIGINT)
        t_int = now
    elif t_int is not None and not killed and now >= t_int + KILL_AFTER:
        # a SIGINT the program missed (bpftrace's, right after it attached): not a hang
        os.kill(target(), signal.SIGKILL)
        killed = True
    for fd in rl:
        data = os.read(fd, 65536)
        if not data:
            open_fds.remove(fd)
            continue
        bufs[fd] += data
        *lines, bufs[fd] = bufs[fd].split(b"\n")
        for line in lines:
            s = line.decode(errors="replace")
            if phases is not None and s.startswith('{"phase"'):
                ph = json.loads(s)
                phases.append([ph["phase"], round(ph["t_s"] - t0, 4), ph.get("cpu_s")])
                continue
            if t_ready is None and re.search(ready, s):
                t_ready = now
            if t_int is not None and re.search(report, s):
                t_report = now
_, status, ru = os.wait4(pid, 0)
t_exit = time.monotonic()
rss_kb, extra = ru.ru_maxrss, {"rss_floor_kb": own_rss_kb}
if rss_file is not None:
    try:
        rss_kb, extra = int(open(rss_file).read().split()[-1]), {}
    except (OSError, ValueError, IndexError):
        pass
    os.unlink(rss_file)
print(json.dumps({
    "attach_s": None if t_ready is None else round(t_ready - t0, 4),
    "report_s": None if t_report is None else round(t_report - t_int, 4),
    "exit_s": None if t_report is None else round(t_exit - t_report, 4),
    "stop_s": None if t_int is None else round(t_exit - t_int, 4),
    "rss_kb": rss_kb,
    **extra,
    "rc": os.waitstatus_to_exitcode(status),
    **({"killed": True} if killed else {}),
    **({"phases": phases} if phases is not None else {}),
}))
