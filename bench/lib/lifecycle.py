#!/usr/bin/env python3
# bench/lib/lifecycle.py: a tracer's start-up, exit time and peak memory, measured from outside.
#
#   lifecycle.py [--ready RE] [--report RE] [--run S] -- CMD ARGS...
#
# Starts CMD, notes when a line matching --ready appears on its stderr or stdout
# (attached), lets it trace for --run seconds, sends SIGINT, notes when a line
# matching --report appears (the final report's last line, or its first when
# --report-first), and when the process has exited. Prints one JSON line:
# {"attach_s", "report_s" (SIGINT -> report), "exit_s" (report -> exit), "rss_kb"
# (peak, from wait4's rusage), "rc"}.
import json
import os
import re
import select
import signal
import sys
import time

args = sys.argv[1:]
ready, report, run = r"^tracing |^counting|^watching |^Attaching", r'"report": *"summary"|^total over|^@', 1.0
while args and args[0] != "--":
    if args[0] == "--ready":
        ready = args[1]
    elif args[0] == "--report":
        report = args[1]
    elif args[0] == "--run":
        run = float(args[1])
    args = args[2:]
cmd = args[1:]
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
bufs = {r_out: b"", r_err: b""}
t_ready = t_report = t_int = None
open_fds = [r_out, r_err]
while open_fds:
    timeout = None
    now = time.monotonic()
    if t_ready is not None and t_int is None:
        timeout = max(0.0, t_ready + run - now)
    rl, _, _ = select.select(open_fds, [], [], timeout)
    now = time.monotonic()
    if t_ready is not None and t_int is None and now >= t_ready + run:
        os.kill(pid, signal.SIGINT)
        t_int = now
    for fd in rl:
        data = os.read(fd, 65536)
        if not data:
            open_fds.remove(fd)
            continue
        bufs[fd] += data
        *lines, bufs[fd] = bufs[fd].split(b"\n")
        for line in lines:
            s = line.decode(errors="replace")
            if t_ready is None and re.search(ready, s):
                t_ready = now
            if t_int is not None and re.search(report, s):
                t_report = now
_, status, ru = os.wait4(pid, 0)
t_exit = time.monotonic()
print(json.dumps({
    "attach_s": None if t_ready is None else round(t_ready - t0, 4),
    "report_s": None if t_report is None else round(t_report - t_int, 4),
    "exit_s": None if t_report is None else round(t_exit - t_report, 4),
    "rss_kb": ru.ru_maxrss,
    "rc": os.waitstatus_to_exitcode(status),
}))
