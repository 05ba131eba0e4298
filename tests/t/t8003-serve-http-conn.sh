#!/bin/bash
test_description='dbtap serve: keep-alive, pipelined and HTTP/1.0 requests, HEAD, refusals, and the counters of each'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/serve.sh

# requests written byte for byte; answers read by their Content-Length
cat >http.py <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
def conn():
    return socket.create_connection((host, int(port)), timeout=20)
def answer(s, buf=b"", head_only=False):
    """One answer read from s: (status, fields, body, bytes after it)."""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        assert b, ("closed before an answer", buf)
        buf += b
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0].startswith("HTTP/1.1 "), lines[0]
    f = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
    n = 0 if head_only else int(f["content-length"])
    while len(rest) < n:
        b = s.recv(65536)
        assert b, "closed in a body"
        rest += b
    return int(lines[0].split()[1]), f, rest[:n], rest[n:]
def closed(s):
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
PY
py() { python3 -c "exec(open('http.py').read())
$1" "$SERVE_ADDR"; }

test_expect_success 'set up a cluster and serve it' '
	pg_start pg "autovacuum = off" &&
	serve_start serve.err --pg "$PGDATA" --collect stat --rescan 0 --request-timeout 3
'

test_expect_success 'keep-alive: GET, HEAD and / on one connection, until Connection: close' '
	py "
s = conn()
s.sendall(b\"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n\")
st, f, body, left = answer(s)
assert st == 200 and b\"dbtap_build_info\" in body and left == b\"\", (st, f)
assert f[\"content-type\"].startswith(\"text/plain; version=0.0.4\") and \"connection\" not in f, f
# HEAD: the length a GET has (give or take counters grown by a digit), and no body:
# the next answer starts right after the head
s.sendall(b\"HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n\")
st, f, _, left = answer(s, head_only=True)
assert st == 200 and abs(int(f[\"content-length\"]) - len(body)) < 100, (f, len(body))
st, f, page, left = answer(s, left)
assert st == 200 and b\"/metrics\" in page and f[\"connection\"] == \"close\", (st, f)
assert f[\"content-type\"] == \"text/html; charset=utf-8\", f
assert left == b\"\" and closed(s)
"
'

test_expect_success 'pipelined requests are answered in order' '
	py "
s = conn()
s.sendall(b\"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n\"
          b\"GET /metrics?x=1 HTTP/1.1\r\nHost: t\r\n\r\n\")
a = answer(s)
b = answer(s, a[3])
c = answer(s, b[3])
assert (a[0], b[0], c[0]) == (200, 404, 200), (a[:2], b[:2], c[:2])
assert b\"/metrics\" in a[2] and b\"dbtap_build_info\" in c[2] and c[3] == b\"\"
s.close()
"
'

test_expect_success 'HTTP/1.0: closed after the answer unless keep-alive is asked for' '
	py "
s = conn()
s.sendall(b\"GET / HTTP/1.0\r\n\r\n\")
st, f, _, left = answer(s)
assert st == 200 and f[\"connection\"] == \"close\" and closed(s), f
s = conn()
s.sendall(b\"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n\")
st, f, _, left = answer(s)
assert st == 200 and f[\"connection\"] == \"keep-alive\", f
s.sendall(b\"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n\")
assert answer(s)[0] == 200
s.close()
"
'

test_expect_success 'OpenMetrics when the Accept header prefers it' '
	py "
s = conn()
s.sendall(b\"GET /metrics HTTP/1.1\r\nHost: t\r\nAccept: text/plain;q=0.5\r\n\"
          b\"Accept: application/openmetrics-text; version=1.0.0\r\n\r\n\")
st, f, body, _ = answer(s)
assert st == 200 and f[\"content-type\"].startswith(\"application/openmetrics-text; version=1.0.0\"), f
assert body.endswith(b\"# EOF\n\"), body[-40:]
s.close()
"
'

test_expect_success 'malformed, oversized, HTTP/2 and chunked requests, and POST: refused and closed' '
	py "
for req, want in ((b\"\x01\x02garbage\r\n\r\n\", 400),
                  (b\"GET /metrics HTTP/1.1\r\nHost: t\r\nX: \" + b\"a\" * 9000 + b\"\r\n\r\n\", 431),
                  (b\"GET /metrics HTTP/2.0\r\nHost: t\r\n\r\n\", 505),
                  (b\"GET /metrics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\", 501),
                  (b\"POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc\", 405)):
    s = conn()
    s.sendall(req)
    st, f, body, _ = answer(s)
    assert st == want and f[\"connection\"] == \"close\" and closed(s), (req[:30], st, f)
    assert want != 405 or f[\"allow\"] == \"GET, HEAD\", f
"
'

test_expect_success 'an idle keep-alive connection is cut at the request deadline' '
	py "
import time
s = conn()
s.sendall(b\"GET / HTTP/1.1\r\nHost: t\r\n\r\n\")
assert answer(s)[0] == 200
t0 = time.time()
assert closed(s)
# --request-timeout 3, checked once a second
assert 2.9 <= time.time() - t0 <= 15, time.time() - t0
"
'

test_expect_success 'the counters say what the tests above sent' '
	scrape m.txt &&
	metrics_py "
page = lambda p: get(\"dbtap_http_requests_total\", page=p)
# /metrics: GET, HEAD, pipelined, OpenMetrics, and this scrape
assert page(\"metrics\") == 5, m
# /: keep-alive, pipelined, 1.0 three times, the idle connection
assert page(\"index\") == 6, m
assert page(\"not_found\") == 1 and page(\"bad_method\") == 1 and page(\"bad_request\") == 4, m
# 1 + 1 + 2 + 1 + 5 + 1 connections above, and this scrape
assert get(\"dbtap_http_connections_total\") == 12, m
assert get(\"dbtap_http_connections_cut_total\") == 1, m
" <m.txt &&
	serve_stop
'

test_done
