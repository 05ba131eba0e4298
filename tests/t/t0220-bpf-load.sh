#!/bin/bash
test_description='every BPF program loads with the strictest verifier flags the kernel takes'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/bpfobj.sh

# Strict alignment (any kernel) and register invariant checks (Linux 6.8).
want_flags=1
kver=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
set -- $kver
if [ "$1" -gt 6 ] || { [ "$1" = 6 ] && [ "$2" -ge 8 ]; }; then
	want_flags=$((1 | 128))
fi

test_expect_success 'set up a cluster' '
	pg_start &&
	BIN=$(readlink /proc/$PG_PID/exe)
'

# Each command, attached: DBTAP_BPF_STATS lines on stderr, one per program loaded, and
# the kernel's view of each (bpftool: its name and translated size; dbtap's fdinfo).
check_cmd() {
	local out=$1
	shift
	DBTAP_BPF_STATS=1 "$DBTAP" "$@" >"$out" 2>"$out.err" </dev/null &
	local pid=$! i
	for i in $(seq 1 200); do
		grep -qE "^(tracing|counting) " "$out.err" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	grep -qE "^(tracing|counting) " "$out.err" || { cat "$out.err"; kill $pid; return 1; }
	bpftool -j prog show >"$out.progs" &&
	bpf_objs_of $pid >"$out.held" &&
	kill -INT $pid && wait $pid &&
	grep "^{\"bpf_prog\"" "$out.err" >"$out.stats" &&
	python3 - "$out" $want_flags <<-\EOF
	import json, sys
	out, want = sys.argv[1], int(sys.argv[2])
	held = {int(l.split()[1]) for l in open(out + ".held") if l.startswith("prog ")}
	stats = [json.loads(l) for l in open(out + ".stats")]
	progs = {p["id"]: p for p in json.load(open(out + ".progs"))}
	assert stats, "no program loaded"
	for s in stats:
	    assert s["prog_flags"] & want == want, s
	    assert s["verified_insns"] >= 1 and s["verify_us"] >= 0, s
	    p = progs.get(s["id"])
	    assert p, (s, "not in bpftool prog show")
	    assert p["name"] == s["bpf_prog"][:15], (p["name"], s)
	    assert p["bytes_xlated"] == 8 * s["xlated_insns"], (p["bytes_xlated"], s)
	    assert s["id"] in held, (s, "not held by dbtap")
	    print("%-8s %-14s %6d verified %5d translated %8d us" % (
	        s["object"], s["bpf_prog"], s["verified_insns"], s["xlated_insns"], s["verify_us"]))
	EOF
}

test_expect_success 'count, tps, latency' '
	check_cmd c.json count --pg="$PGDATA" -j "usdt:postgresql:*" "uretprobe:$BIN:PortalRun" &&
	check_cmd t.json tps --pg="$PGDATA" -j &&
	check_cmd l.json latency query --pg="$PGDATA" -j &&
	check_cmd l2.json latency "uprobe:$BIN:PortalRun" "uretprobe:$BIN:PortalRun" --pg="$PGDATA" -j
'

test_expect_success 'stat --per query and --per transaction' '
	check_cmd s.json stat --per query -e task-clock --pg="$PGDATA" -j &&
	check_cmd s2.json stat --per transaction -e task-clock --pg="$PGDATA" -j
'

test_expect_success 'wait, profile --timeline' '
	check_cmd w.json wait --pg="$PGDATA" -j &&
	check_cmd p.json profile --timeline --pg="$PGDATA" -j
'

test_done
