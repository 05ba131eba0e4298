#!/bin/bash
# t2000: dbtap doctor's machine and target checks against independent probes.
test_description='dbtap doctor -j: every figure checked against another way of asking'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

pg_start || test_bail "cannot start a PostgreSQL cluster"

test_expect_success 'doctor -j prints one object with the stable keys and their types' '
	dbtap doctor -j >doctor.json &&
	test $(wc -l <doctor.json) = 1 &&
	json_py "
for k in (\"bpf\", \"uprobe\", \"pmu_hw_counters\", \"btf\", \"ringbuf\", \"uprobe_ref_ctr\",
          \"uprobe_nop5_optimized\", \"sw_events\", \"root\"):
    assert type(d[k]) is bool, k
assert type(d[\"hw_breakpoint_slots\"]) is int
assert all(c[\"status\"] in (\"OK\", \"NOT AVAILABLE\", \"UNKNOWN\") for c in d[\"checks\"])
assert all(\"hint\" in c for c in d[\"checks\"] if c[\"status\"] == \"NOT AVAILABLE\")
assert \"target\" not in d
" <doctor.json
'

test_expect_success 'kernel, root and perf_event_paranoid are what the system says' '
	json_py "
import os
assert d[\"kernel\"] == os.uname().release
assert d[\"arch\"] == os.uname().machine
assert d[\"root\"] == (os.geteuid() == 0)
assert d[\"perf_event_paranoid\"] == int(open(\"/proc/sys/kernel/perf_event_paranoid\").read())
assert d[\"btf\"] == os.path.exists(\"/sys/kernel/btf/vmlinux\")
" <doctor.json
'

test_expect_success 'uprobe_multi: what the kernel version says (6.6), off when told so' '
	DBTAP_NO_UPROBE_MULTI=1 dbtap doctor -j >nomulti.json &&
	json_py "
import os, re
v = tuple(int(x) for x in re.match(r\"(\\d+)\\.(\\d+)\", os.uname().release).groups())
assert d[\"uprobe_multi\"] == (v >= (6, 6)), (v, d[\"uprobe_multi\"])
" <doctor.json &&
	json_py "
assert d[\"uprobe_multi\"] is False, d
c = [c for c in d[\"checks\"] if c[\"name\"] == \"uprobe_multi\"][0]
assert c[\"status\"] == \"NOT AVAILABLE\" and c[\"hint\"], c
" <nomulti.json
'

test_expect_success 'bpf and ringbuf agree with bpftool feature probe' '
	bpftool -j feature probe kernel >bpftool.json &&
	python3 -c "
import json
b = json.load(open(\"bpftool.json\"))
d = json.loads(open(\"doctor.json\").read())
assert d[\"bpf\"] == b[\"program_types\"][\"have_kprobe_prog_type\"], (d[\"bpf\"],)
assert d[\"ringbuf\"] == b[\"map_types\"][\"have_ringbuf_map_type\"]
"
'

# Other tests and tracers may hold breakpoint slots, for a moment or for the whole run:
# ask until two independent counts taken around dbtap agree, then compare (never
# requiring all 4 free).
test_expect_success 'hw_breakpoint_slots equals an independent count (and DR0-DR3 on x86)' '
	ok= &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		before=$(perl "$TEST_LIB"/bpslots.pl | cut -d" " -f1) &&
		got=$(dbtap doctor -j | json_py "print(d[\"hw_breakpoint_slots\"])") &&
		after=$(perl "$TEST_LIB"/bpslots.pl | cut -d" " -f1) &&
		echo "try $i: independent $before, dbtap $got, independent $after" &&
		# free slots, so fewer than DR0-DR3 while another tracer holds some
		if [ "$before" = "$after" ] && [ "$got" = "$before" ] &&
		   { [ "$(uname -m)" != x86_64 ] || [ "$got" -le 4 ]; }; then
			ok=1
			break
		fi
		sleep 1
	done &&
	test -n "$ok"
'

test_expect_success 'pmu_hw_counters agrees with perf stat -e instructions' '
	if command -v perf >/dev/null; then
		perf stat -x, -e instructions true 2>perf.out >/dev/null
		if grep -q "^<not supported>" perf.out; then want=False; else want=True; fi
		cat perf.out
	else
		# The core PMU is the event source with PERF_TYPE_RAW (4).
		want=False
		for t in /sys/bus/event_source/devices/*/type; do
			[ "$(cat $t)" = 4 ] && want=True
		done
	fi &&
	json_py "assert d[\"pmu_hw_counters\"] == $want, d[\"pmu_hw_counters\"]" <doctor.json
'

test_expect_success 'the uprobe test counted every call; ref_ctr and nop5 as the kernel says' '
	up=/sys/bus/event_source/devices/uprobe &&
	if [ -d $up ]; then want=True; else want=False; fi &&
	if [ -e $up/format/ref_ctr_offset ]; then ref=True; else ref=False; fi &&
	# Optimized nop5 uprobes: x86-64, Linux 6.18 and later.
	nop5=$(python3 -c "
import os
r = tuple(int(x) for x in os.uname().release.split(\".\")[:2])
print(os.uname().machine == \"x86_64\" and r >= (6, 18))") &&
	json_py "
assert d[\"uprobe\"] == $want
assert d[\"uprobe_test_calls\"] > 0
assert d[\"uprobe_test_hits\"] == d[\"uprobe_test_calls\"]
assert d[\"uprobe_ref_ctr\"] == $ref
assert d[\"uprobe_nop5_optimized\"] == $nop5
" <doctor.json
'

test_expect_success 'text output: one status per check, a hint under each NOT AVAILABLE' '
	dbtap doctor >doctor.txt &&
	grep -E "^  (OK|NOT AVAILABLE|UNKNOWN) +hw breakpoints" doctor.txt &&
	n_na=$(grep -c "^  NOT AVAILABLE" doctor.txt) &&
	n_hint=$(grep -c "^ *hint: " doctor.txt) &&
	test "$n_hint" -ge "$n_na" &&
	! awk "length(\$0) > 99" doctor.txt | grep .
'

# Independent facts about a binary, from readelf.
readelf_facts() {
	readelf -n "$1" | sed -n "s/^ *Build ID: //p" >build_id &&
	readelf -n "$1" | grep -c "NT_STAPSDT" >usdt_sites
	readelf -n "$1" | sed -n "s/^ *Name: //p" | sort -u | wc -l >usdt_probes
	if readelf -S -W "$1" | grep -q " \.symtab "; then echo symtab; else echo dynsym; fi >symbols
}

test_expect_success 'doctor --pg: the server binary, build-id, USDT probes and major version' '
	dbtap doctor -j --pg "$PGDATA" >pg.json &&
	readelf_facts "$PG_BINDIR/postgres" &&
	major=$(($(pg_sql "show server_version_num") / 10000)) &&
	dbtap wait --pg "$PGDATA" -d 0.01 -j >w.json 2>w.err &&
	if grep -q "statements from PgBackendStatus" w.err; then wait_bs=1; else wait_bs=0; fi &&
	dbtap latency --pg "$PGDATA" -d 0.01 -j query >l.json 2>l.err &&
	lat_from=$(json_py "print(d[\"statements_from\"])" <l.json) &&
	dbtap stat --pg "$PGDATA" --by query -e task-clock -d 0.01 -j >s.json 2>s.err &&
	stat_from=$(json_py "print(d[\"statements_from\"])" <s.json) &&
	json_py "
t = d[\"target\"]
import os
assert os.path.samefile(t[\"binary\"], \"$PG_BINDIR/postgres\")
assert t[\"build_id\"] == \"$(cat build_id)\", t[\"build_id\"]
assert t[\"usdt_sites\"] == $(cat usdt_sites), t[\"usdt_sites\"]
assert t[\"usdt_probes\"] == $(cat usdt_probes), t[\"usdt_probes\"]
assert t[\"usdt_providers\"] == (1 if t[\"usdt_sites\"] else 0)
assert t[\"symbols\"] == \"$(cat symbols)\" or t[\"symbols\"] == \"debuginfo\"
assert t[\"pg_major\"] == $major
assert t[\"pg_postmaster\"] == $PG_PID
# the path dbtap wait takes, as wait itself says it (its tracing line)
assert t[\"wait_statements\"] == (\"pg_backend_status\" if $wait_bs else \"usdt\"), t
c = [c for c in d[\"checks\"] if c[\"name\"] == \"wait\"]
assert len(c) == 1 and (c[0][\"status\"] == \"OK\") == bool($wait_bs), c
# and latency query, as its JSON says
assert t[\"latency_statements\"] == \"$lat_from\", t
c = [c for c in d[\"checks\"] if c[\"name\"] == \"latency\"]
assert len(c) == 1 and (c[0][\"status\"] == \"OK\") == (\"$lat_from\" == \"pg_backend_status\"), c
# and stat --by query, as its JSON says
assert t[\"stat_statements\"] == \"$stat_from\", t
c = [c for c in d[\"checks\"] if c[\"name\"] == \"stat\"]
assert len(c) == 1 and (c[0][\"status\"] == \"OK\") == (\"$stat_from\" == \"pg_backend_status\"), c
" <pg.json
'

test_expect_success 'doctor -p of a backend finds its cluster too' '
	pid=$(pg_sql "select pid from pg_stat_activity where backend_type = '"'checkpointer'"'") &&
	major=$(($(pg_sql "show server_version_num") / 10000)) &&
	dbtap doctor -j -p "$pid" >cp.json &&
	json_py "assert d[\"target\"][\"pg_major\"] == $major
assert d[\"target\"][\"pg_postmaster\"] == $PG_PID" <cp.json
'

test_expect_success 'doctor -p of a program built with -g: .symtab, DWARF, no PostgreSQL' '
	{ sleep 30 | "$WORKLOADS"/symbols >/dev/null & } &&
	spid=$(pgrep -n -f "^$WORKLOADS/symbols") &&
	readelf_facts "$WORKLOADS"/symbols &&
	dbtap doctor -j -p $spid >sym.json; rc=$?
	pkill -P $$ -x sleep; kill $spid; test $rc = 0 &&
	json_py "
t = d[\"target\"]
assert t[\"symbols\"] == \"$(cat symbols)\" == \"symtab\"
assert t[\"dwarf\"] is True
assert t[\"pg_major\"] is None
assert t[\"usdt_sites\"] == $(cat usdt_sites)
" <sym.json
'

test_expect_success 'as an unprivileged user: said plainly, with hints, exit 0' '
	dbtap_as nobody doctor -j >nobody.json &&
	json_py "
c = {c[\"name\"]: c for c in d[\"checks\"]}
assert d[\"root\"] is False
assert c[\"privileges\"][\"status\"] == \"NOT AVAILABLE\" and \"hint\" in c[\"privileges\"]
# BPF tracing programs and the uprobe PMU both need CAP_PERFMON (kernel rule).
assert d[\"bpf\"] is False and d[\"uprobe\"] is False
assert c[\"bpf\"][\"hint\"].startswith(\"run as root\")
" <nobody.json
'

test_done
