# tests/lib/serve.sh: helpers for the dbtap serve tests, sourced after test-lib.sh.
#
#	serve_start OUT ARGS...   runs `dbtap serve --listen 127.0.0.1:0 ARGS` in the
#	                          background (stderr in OUT), returns once it serves; sets
#	                          SERVE_PID and SERVE_ADDR (HOST:PORT)
#	serve_stop [SIGNAL]       SIGTERM (or SIGNAL), waits, returns serve's status
#	scrape FILE [ACCEPT]      GET /metrics into FILE; the text format must pass
#	                          `promtool check metrics`, OpenMetrics must end in # EOF
#	metrics_py 'PYTHON' < F   runs PYTHON with `m`: (name, labels, value) of every
#	                          sample, and helpers `get(name, **labels)` (one sample's
#	                          value, None when absent) and `total(name, **labels)`
#	scrape_until FILE 'PYEXPR'  scrapes into FILE every 0.1 s (15 s at most) until the
#	                          expression holds on it (metrics_py's helpers): for what
#	                          serve reads once a second, instead of sleeping a second

SERVE_PID=
SERVE_ADDR=
SERVE_ALL=
test_atexit 'serve_kill'

command -v promtool >/dev/null || test_skip_all "promtool not found (make deps installs prometheus)"
command -v curl >/dev/null || test_skip_all "curl not found (make deps installs it)"

# Every serve started, also those a failed test left running.
serve_kill() {
	local p
	for p in $SERVE_ALL; do
		kill -KILL "$p" 2>/dev/null
	done
	SERVE_PID=
}

serve_start() {
	local out=$1
	shift
	"$DBTAP" serve --listen 127.0.0.1:0 "$@" >"$out.out" 2>"$out" </dev/null &
	SERVE_PID=$!
	SERVE_ALL="$SERVE_ALL $SERVE_PID"
	wait_for_start "$SERVE_PID" "$out" '^serving http://.*/metrics'
	case $? in
	0)	SERVE_ADDR=$(sed -n 's|^serving http://\(.*\)/metrics.*|\1|p' "$out")
		return 0 ;;
	1)	echo "dbtap serve exited with $START_STATUS before serving:"
		SERVE_PID= ;;
	*)	echo "dbtap serve did not serve within 60 s:" ;;
	esac
	cat "$out"
	return 1
}

serve_stop() {
	local rc
	kill -"${1:-TERM}" "$SERVE_PID" || return 1
	wait "$SERVE_PID"
	rc=$?
	SERVE_PID=
	return $rc
}

scrape() {
	local file=$1 accept=${2:-}
	curl -sS -f ${accept:+-H "Accept: $accept"} -D "$file.headers" \
		"http://$SERVE_ADDR/metrics" >"$file" || return 1
	if grep -qi '^content-type: application/openmetrics-text' "$file.headers"; then
		tail -n1 "$file" | grep -qx '# EOF' || { echo "no # EOF at the end of $file"; return 1; }
		return 0
	fi
	promtool check metrics <"$file" || { echo "promtool check metrics failed on $file"; return 1; }
}

metrics_py() {
	python3 -c '
import re, sys
m = []
sample = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
label = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?")
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    r = sample.match(line)
    assert r, line
    labels = {k: v.encode().decode("unicode_escape") for k, v in label.findall(r.group(3) or "")}
    m.append((r.group(1), labels, float(r.group(4))))
def pick(name, **kw):
    return [v for n, l, v in m if n == name and all(l.get(k) == x for k, x in kw.items())]
def get(name, **kw):
    v = pick(name, **kw)
    assert len(v) <= 1, (name, kw, v)
    return v[0] if v else None
def total(name, **kw):
    return sum(pick(name, **kw))
exec(sys.argv[1])
' "$1"
}

scrape_until() {
	local i
	for i in $(seq 1 150); do
		scrape "$1" || return 1
		metrics_py "sys.exit(0 if ($2) else 3)" <"$1" && return 0
		sleep 0.1
	done
	echo "scrape_until: $2 never held in $1"
	return 1
}
