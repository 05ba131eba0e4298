#!/usr/bin/env python3
# tests/lib/httpload.py: good and malformed HTTP requests against dbtap serve, at once.
#
#	httpload.py HOST:PORT PID TOTAL CLIENTS BAD SLOW
#
# TOTAL requests over CLIENTS threads, BAD of them malformed (garbage, oversized headers,
# bad request lines, truncated ones), plus SLOW clients that send a byte a second and
# must be cut by the server. Prints one JSON object: counts, failures, RSS of PID (KiB)
# after a warm-up and at the end.
import json, socket, sys, threading, time

host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
pid, total, clients, bad, slow = (int(x) for x in sys.argv[2:7])


def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])


def exchange(data, timeout=15):
    """Sends data, reads one response (or until the server closes): (status or None, (head, body))."""
    s = socket.create_connection((host, port), timeout=timeout)
    resp = b""
    try:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may answer and close before all of it is sent
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            resp += b
            head, sep, body = resp.partition(b"\r\n\r\n")
            if sep:
                length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if length and len(body) >= int(length[0].split(b":")[1]):
                    break
    finally:
        s.close()
    if not resp.startswith(b"HTTP/1."):
        return None, resp
    head, _, body = resp.partition(b"\r\n\r\n")
    return int(head.split()[1]), (head, body)


def good(path):
    status, r = exchange(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
    if status != 200:
        return f"status {status}"
    head, body = r
    length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    if length and int(length[0].split(b":")[1]) != len(body):
        return "short body"
    if path == "/metrics" and b"dbtap_build_info" not in body:
        return "no dbtap_build_info"
    return None


MALFORMED = [
    b"\x00\xff\x13garbage\x7f\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\nHost: t\r\n\r\n",
    b"BREW /metrics HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
    b"GET /met\x00rics HTTP/1.1\r\nHost: t\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\nabc",
    b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 5000 + b"\r\n",
    b"GET /met",
]

lock = threading.Lock()
res = {"good": 0, "good_failed": [], "bad": 0, "bad_answers": {}, "bad_ok": [], "slow": [],
       "rss_warm_kib": None}
plan = ["bad" if i % (total // bad) == 0 and i // (total // bad) < bad else "good"
        for i in range(total)] if bad else ["good"] * total
next_i = [0]


def worker():
    while True:
        with lock:
            i = next_i[0]
            next_i[0] += 1
            if i == 200:
                res["rss_warm_kib"] = rss()
        if i >= total:
            return
        if plan[i] == "good":
            err = good("/metrics" if i % 10 else "/")
            with lock:
                res["good"] += 1
                if err:
                    res["good_failed"].append((i, err))
        else:
            k = (i // (total // bad)) % len(MALFORMED)
            try:
                status, _ = exchange(MALFORMED[k])
            except OSError as e:
                status = type(e).__name__
            with lock:
                res["bad"] += 1
                res["bad_answers"][str(status)] = res["bad_answers"].get(str(status), 0) + 1
                # malformed must never get 200; 405 for BREW is the one well-formed refusal
                if status == 200:
                    res["bad_ok"].append(k)


def slowloris():
    s = socket.create_connection((host, port), timeout=30)
    t0 = time.time()
    req = b"GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: " + b"z" * 100
    closed = None
    for b in req:
        try:
            s.send(bytes([b]))
            s.settimeout(1.0)
            if s.recv(1024) == b"":
                closed = time.time() - t0
                break
        except socket.timeout:
            continue
        except OSError:
            closed = time.time() - t0
            break
    s.close()
    with lock:
        res["slow"].append(closed)


threads = [threading.Thread(target=slowloris) for _ in range(slow)]
threads += [threading.Thread(target=worker) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
res["after"] = good("/metrics")
res["rss_end_kib"] = rss()
print(json.dumps(res))
