#!/bin/bash
test_description='dbtap count: hits per probe against a workload'"'"'s own loop counts'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/bpfobj.sh

W=$WORKLOADS/funcloop
[ -x "$W" ] || test_bail "$W is not built: run make"

test_expect_success 'uprobe, uretprobe, USDT and wildcards on funcloop = its own counts' '
	funcloop_start loop1.out 20000 &&
	trace_start c1.json count -p $LOOP_PID -j uprobe:$W:funcloop_work usdt:funcloop:tick \
		"uretprobe:$W:funcloop_*" &&
	kill -USR1 $LOOP_PID &&
	funcloop_wait &&
	trace_wait &&
	test_grep "exited; stopping" c1.json.err &&
	calls=$(awk "/^calls/ { print \$2 }" loop1.out) &&
	ticks=$(awk "/^calls/ { print \$4 }" loop1.out) &&
	test "$calls" = 20000 &&
	json_py "
calls, ticks = $calls, $ticks
s = d
assert s[\"report\"] == \"summary\" and s[\"end\"] == \"target exited\", s
hits = {p[\"kind\"] + \":\" + p[\"name\"]: p[\"hits\"] for p in s[\"probes\"]}
assert hits == {\"uprobe:funcloop_work\": calls, \"usdt:tick\": calls,
                \"uretprobe:funcloop_idle\": 0, \"uretprobe:funcloop_work\": calls}, hits
# the workload saw the USDT semaphore raised at every call
assert ticks == calls, ticks
assert s[\"total\"] == 3 * calls, s
" <c1.json
'

# Kernels before 6.6 have no multi-uprobe links: one uprobe per site, same counts.
test_expect_success 'the same counts through one uprobe per site (kernels without multi links)' '
	funcloop_start loop1b.out 5000 &&
	DBTAP_NO_UPROBE_MULTI=1 trace_start c1b.json count -p $LOOP_PID -j \
		uprobe:$W:funcloop_work usdt:funcloop:tick "uretprobe:$W:funcloop_*" &&
	kill -USR1 $LOOP_PID &&
	funcloop_wait &&
	trace_wait &&
	calls=$(awk "/^calls/ { print \$2 }" loop1b.out) &&
	test "$calls" = 5000 &&
	json_py "
hits = {p[\"kind\"] + \":\" + p[\"name\"]: p[\"hits\"] for p in d[\"probes\"]}
assert hits == {\"uprobe:funcloop_work\": $calls, \"usdt:tick\": $calls,
                \"uretprobe:funcloop_idle\": 0, \"uretprobe:funcloop_work\": $calls}, hits
" <c1b.json
'

test_expect_success 'USDT semaphore: raised while attached, 0 after detach (read from memory)' '
	funcloop_start loop2.out 500 &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 0 &&
	trace_start c2.json count -p $LOOP_PID -j usdt:$W:funcloop:tick &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 1 &&
	bpf_objs_of $TRACE_PID >objs.attached &&
	trace_stop &&
	test "$(read_u16 $LOOP_PID $LOOP_SEMA)" = 0 &&
	kill -USR1 $LOOP_PID &&
	funcloop_wait &&
	test_grep "^calls 500 ticks_enabled 0$" loop2.out &&
	json_py "assert d[\"probes\"][0][\"hits\"] == 0, d" <c2.json &&
	grep -q "^prog " objs.attached &&
	bpf_objs_gone objs.attached
'

test_expect_success 'intervals add up to the total; --by pid names the workload' '
	funcloop_start loop3.out -s 100 3000 &&
	lp=$LOOP_PID &&
	trace_start c3.json count -p $LOOP_PID -j -i 0.1 --by pid uprobe:$W:funcloop_work &&
	kill -USR1 $LOOP_PID &&
	funcloop_wait &&
	trace_wait &&
	json_py "
iv, s = lines[:-1], lines[-1]
assert len(iv) >= 2, len(iv)
assert sum(l[\"probes\"][0][\"hits\"] for l in iv) == s[\"probes\"][0][\"hits\"] == 3000, s
assert all(l[\"report\"] == \"interval\" for l in iv), iv
assert s[\"probes\"][0][\"processes\"] == [{\"pid\": $lp, \"type\": \"funcloop\", \"user\": None,
                                          \"database\": None, \"hits\": 3000}], s
# every interval splits its hits by process: the same hits, and over the run all of them
p0 = [l[\"probes\"][0] for l in iv]
assert all(sum(x[\"hits\"] for x in p[\"processes\"]) + p.get(\"unattributed_hits\", 0) == p[\"hits\"] for p in p0), iv
assert sum(x[\"hits\"] for l in iv for x in l[\"probes\"][0][\"processes\"]) == 3000, iv
" <c3.json
'

test_expect_success 'text output lists every probe with its hits' '
	funcloop_start loop4.out 100 &&
	trace_start c4.txt count -p $LOOP_PID uprobe:$W:funcloop_work uprobe:$W:funcloop_idle &&
	kill -USR1 $LOOP_PID && funcloop_wait && trace_wait &&
	test_grep "^  uprobe:funcloop:funcloop_work  *100 " c4.txt &&
	test_grep "^  uprobe:funcloop:funcloop_idle  *0 " c4.txt
'

test_expect_success 'refusals: unknown names list close ones; not a function; no USDT notes' '
	test_expect_code 2 dbtap count uprobe:$W:funcloop_wrk 2>e1 &&
	test_grep "^error: no function '"'funcloop_wrk'"'" e1 &&
	test_grep "^hint: close ones in this binary: funcloop_work" e1 &&
	test_expect_code 2 dbtap count uprobe:$W:funcloop_sink 2>e2 &&
	test_grep "is not a function" e2 && test_grep "^hint: " e2 &&
	test_expect_code 2 dbtap count usdt:$W:funcloop:tik 2>e3 &&
	test_grep "^error: no USDT probe funcloop:tik" e3 &&
	test_grep "^hint: close ones in this binary: funcloop:tick" e3 &&
	test_expect_code 2 dbtap count usdt:$(command -v true):prov:name 2>e4 &&
	test_grep "has no USDT probes: it was built without --enable-dtrace" e4 &&
	test_grep "^hint: trace its functions with uprobes instead" e4
'

PG=$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -n1)
if [ -n "$PG" ]; then
test_expect_success 'stripped server binary: static functions refused with the reason' '
	test_expect_code 2 dbtap count uprobe:$PG:exec_simple_query 2>e5 &&
	test_grep "stripped, so static or inlined functions cannot be probed" e5 &&
	test_grep "^hint: " e5
'
test_expect_success 'a wildcard over the cap is refused with a hint' '
	test_expect_code 2 dbtap count "uprobe:$PG:pg_*" 2>e6 &&
	test_grep "more than the 64 allowed" e6 &&
	test_grep "^hint: narrow the pattern, or raise the cap with --max-probes" e6 &&
	test_expect_code 2 dbtap count "usdt:$PG:postgresql:*" --max-probes 10 2>e7 &&
	test_grep "more than the 10 allowed" e7
'
else
test_skip 'stripped server binary refusals' 'no PostgreSQL server installed'
test_skip 'wildcard cap' 'no PostgreSQL server installed'
fi

# bench/overhead.sh measures the trap alone with it: the empty program must run at
# every site the counting program would, as often (the kernel's run count, with its
# BPF statistics on for this test only), and count nothing. The workload is the
# script's child: a zombie until reaped, so dbtap still sees its target when the
# run count is read.
test_expect_success 'count --empty-program: run as often as the workload calls, counts nothing' '
	python3 - "$DBTAP" "$W" >empty.out 2>empty.err <<-\EOF &&
	import ctypes, os, re, signal, subprocess, sys, time
	dbtap, w = sys.argv[1], sys.argv[2]
	libc = ctypes.CDLL(None, use_errno=True)
	attr = ctypes.create_string_buffer(8)  # BPF_STATS_RUN_TIME
	assert libc.syscall(321, 32, attr, 8) >= 0, "BPF_ENABLE_STATS"  # bpf(), x86-64
	loop = subprocess.Popen([w, "3000"], stdout=subprocess.PIPE, text=True)
	assert loop.stdout.readline().startswith("pid ")
	err = open("empty.trace.err", "w")
	t = subprocess.Popen([dbtap, "count", "--empty-program", "-j", "-p", str(loop.pid),
	                      "uprobe:" + w + ":funcloop_work", "usdt:funcloop:tick"],
	                     stdout=subprocess.PIPE, stderr=err, text=True)
	while "tracing" not in open("empty.trace.err").read():
	    assert t.poll() is None, open("empty.trace.err").read()
	    time.sleep(0.02)
	fds = [f for f in os.listdir(f"/proc/{t.pid}/fdinfo")
	       if "prog_type" in open(f"/proc/{t.pid}/fdinfo/{f}").read()]
	os.kill(loop.pid, signal.SIGUSR1)
	while open(f"/proc/{loop.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
	    time.sleep(0.02)
	runs = sum(int(re.search(r"^run_cnt:\s*(\d+)", open(f"/proc/{t.pid}/fdinfo/{f}").read(),
	                         re.M).group(1)) for f in fds)
	t.send_signal(signal.SIGINT)
	out, _ = t.communicate(timeout=60)
	calls = re.search(r"^calls (\d+)", loop.communicate()[0], re.M).group(1)
	print(len(fds), runs, calls, t.returncode)
	print(out.strip().splitlines()[-1])
	EOF
	read nprogs runs calls rc <empty.out &&
	test "$calls" = 3000 &&
	test "$rc" = 0 &&
	test "$nprogs" = 1 &&
	test "$runs" = $((2 * calls)) &&
	tail -n 1 empty.out | json_py "
assert d[\"report\"] == \"summary\", d
assert [p[\"hits\"] for p in d[\"probes\"]] == [0, 0], d
"
'

test_expect_success 'bad input: spec syntax, no probe, --by, missing binary, not a program' '
	test_expect_code 2 dbtap count kprobe:foo 2>e8 && test_grep "unknown probe type" e8 &&
	test_expect_code 2 dbtap count usdt:onlyone 2>e9 && test_grep "usdt needs PROVIDER:NAME" e9 &&
	test_expect_code 2 dbtap count 2>e10 && test_grep "needs at least one PROBE" e10 &&
	test_expect_code 2 dbtap count --by tid uprobe:$W:funcloop_work 2>e11 &&
	test_grep "bad --by '"'tid'"'" e11 &&
	test_expect_code 2 dbtap count uprobe:/no/such/bin:f 2>e12 &&
	test_grep "binary '"'/no/such/bin'"' of probe" e12 && test_grep "^hint: " e12 &&
	echo "#!/bin/sh" >script.sh && chmod +x script.sh &&
	test_expect_code 1 dbtap count uprobe:$PWD/script.sh:f 2>e13 &&
	test_grep "is not an ELF file" e13 && test_grep "^hint: name the program" e13
'

test_expect_success 'count -l lists what a spec matches, one per line, as readelf and nm see it' '
	dbtap count -l "usdt:$W:*:*" >l1 &&
	readelf -n "$W" | awk "\$1 == \"Provider:\" { p = \$2 } \$1 == \"Name:\" { print \"usdt:'"$W"':\" p \":\" \$2 }" |
		sort -u >l1.want &&
	test -s l1.want &&
	sort l1 >l1.sorted &&
	test_cmp l1.want l1.sorted &&
	dbtap count -l "uprobe:$W:funcloop_*" | sort >l2 &&
	nm "$W" | awk "\$2 ~ /^[Tt]\$/ && \$3 ~ /^funcloop_/ { print \"uprobe:'"$W"':\" \$3 }" | sort -u >l2.want &&
	test -s l2.want &&
	test_cmp l2.want l2
'

test_expect_success 'usdt:BINARY:NAME (provider left out, as bpftrace writes it) = usdt:BINARY:PROVIDER:NAME' '
	funcloop_start loop9.out 3000 &&
	trace_start c9.json count -p $LOOP_PID -j "usdt:$W:tick" "usdt:$W:funcloop:tick" &&
	kill -USR1 $LOOP_PID &&
	funcloop_wait &&
	trace_wait &&
	calls=$(awk "/^calls/ { print \$2 }" loop9.out) &&
	json_py "
hits = [p[\"hits\"] for p in d[\"probes\"]]
assert hits == [$calls, $calls], (hits, $calls)
" <c9.json &&
	dbtap count -l "usdt:$W:tick" >l9 &&
	test "$(cat l9)" = "usdt:$W:funcloop:tick"
'

test_expect_success 'usdt:BINARY:NAME that no provider has: exit 2, close names in the hint' '
	test_expect_code 2 dbtap count -l "usdt:$W:tock" >o10 2>e10 &&
	test_grep "^error: no USDT probe .*tock" e10 &&
	test_grep "^hint: .*funcloop:tick" e10 &&
	test_must_be_empty o10
'

test_done
