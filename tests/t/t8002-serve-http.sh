#!/bin/bash
test_description='dbtap serve under load: 2,000 requests from 20 clients, malformed and slow ones among them'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/serve.sh

test_expect_success 'set up a cluster and serve it' '
	pg_start pg "autovacuum = off" &&
	# a short request deadline: the slow clients are cut in seconds, not in ten
	serve_start serve.err --pg "$PGDATA" --request-timeout 2 &&
	scrape m0.txt
'

test_expect_success '2,000 requests, 20 clients, 50 malformed, 3 slow: every good one answered' '
	python3 "$TEST_LIB"/httpload.py "$SERVE_ADDR" $SERVE_PID 2000 20 50 3 >load.json &&
	python3 -c "
import json
r = json.load(open(\"load.json\"))
print({k: v for k, v in r.items() if k != \"good_failed\"}, r[\"good_failed\"][:5])
assert r[\"good\"] == 1950 and r[\"good_failed\"] == [], r[\"good_failed\"][:10]
assert r[\"bad\"] == 50 and r[\"bad_ok\"] == [], r
# every malformed request got a 4xx (505 for HTTP/9.9) or was closed unanswered
assert all(k == \"None\" or (k.isdigit() and 400 <= int(k) < 600) for k in r[\"bad_answers\"]), r[\"bad_answers\"]
assert any(k.startswith(\"4\") for k in r[\"bad_answers\"]), r[\"bad_answers\"]
# one byte a second: cut at the 2 s request deadline (not before it), long before its
# 130 bytes are in; not served and not kept
assert len(r[\"slow\"]) == 3 and all(s is not None and 1.9 <= s <= 30 for s in r[\"slow\"]), r[\"slow\"]
assert r[\"after\"] is None, r[\"after\"]
"
'

test_expect_success 'the server still answers, its counters agree, and it cut the slow ones' '
	scrape m1.txt &&
	metrics_py "
# the slow ones and the truncated request (\"GET /met\" and nothing more)
assert get(\"dbtap_http_connections_cut_total\") >= 3, get(\"dbtap_http_connections_cut_total\")
# every tenth good request asks for /: 1,800 /metrics and 150 /; one more after the
# load, and the two scrapes here
assert get(\"dbtap_http_requests_total\", page=\"metrics\") == 1800 + 3, m
assert get(\"dbtap_http_requests_total\", page=\"index\") == 150, m
" <m1.txt
'

test_expect_success 'RSS stable: 2,000 more requests add nothing' '
	python3 "$TEST_LIB"/httpload.py "$SERVE_ADDR" $SERVE_PID 2000 20 50 0 >load2.json &&
	python3 -c "
import json
a, b = json.load(open(\"load.json\")), json.load(open(\"load2.json\"))
print(\"RSS KiB: warm\", a[\"rss_warm_kib\"], \"after 2000\", a[\"rss_end_kib\"], \"after 4000\", b[\"rss_end_kib\"])
assert b[\"good_failed\"] == []
# what malloc keeps between scrapes is reused: no growth past 512 KiB of noise
assert b[\"rss_end_kib\"] - a[\"rss_end_kib\"] <= 512, (a[\"rss_end_kib\"], b[\"rss_end_kib\"])
"
'

test_expect_success '--max-connections 4: a fifth connection waits until one closes' '
	serve_stop &&
	serve_start capped.err --pg "$PGDATA" --max-connections 4 &&
	python3 -c "
import socket, sys, time
host, port = \"$SERVE_ADDR\".rsplit(\":\", 1)
idle = [socket.create_connection((host, int(port))) for _ in range(4)]
time.sleep(0.5)
s = socket.create_connection((host, int(port)), timeout=2)
s.sendall(b\"GET /metrics HTTP/1.1\\r\\nHost: t\\r\\nConnection: close\\r\\n\\r\\n\")
try:
    early = s.recv(100)
except socket.timeout:
    early = None
assert early is None, early
for c in idle:
    c.close()
s.settimeout(5)
assert s.recv(100).startswith(b\"HTTP/1.1 200\")
" &&
	serve_stop
'

test_done
