#!/bin/bash
test_description='dbtap bench: every mechanism counts exactly the calls the workload made'
. "$(dirname "$0")"/../lib/test-lib.sh

# check_rows FILE [PYTHON]: FILE is bench -j output; asserts the documented keys and
# that every count equals the workload's own count, then runs PYTHON with cfg, rows,
# ans and lines defined.
cat >check_rows.py <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cfg = lines[0]
assert cfg["report"] == "config", cfg
assert set(cfg) == {"report", "time_s", "workload", "threads", "repeats", "run_s", "kernel",
                    "arch", "cpus", "bpftrace"}, cfg
rows = [l for l in lines if l["report"] == "row"]
assert len(rows) == len(lines) - 2, lines
# time_s counts from the start, in order
assert [l["time_s"] for l in lines] == sorted(l["time_s"] for l in lines), lines
ans = lines[-1]
assert ans["report"] == "summary" and ans["mismatches"] == 0 and ans["end"] == "duration", ans
assert ans["duration_s"] == ans["time_s"] >= rows[-1]["time_s"], ans
assert set(ans) == {"report", "time_s", "duration_s", "end", "server_function", "usdt_site",
                    "call", "write_uprobe", "write_watchpoint", "write_on_store",
                    "mismatches"}, ans
row_keys = {"report", "time_s", "mechanism", "program", "what", "available", "samples", "events_per_sec",
            "wall_events_per_sec",
            "ns_per_event", "ns_over_baseline", "spread_pct", "iterations", "count", "verified"}
for r in rows:
    if not r["available"]:
        assert set(r) == {"report", "time_s", "mechanism", "program", "what", "available",
                          "reason"}, r
        assert r["reason"], r
        continue
    prog_keys = {"prog_ns", "prog_runs", "prog_iterations", "prog_verified"}
    if r["program"] in ("handler", "empty"):
        # the statistics run: the kernel ran the program once per workload call
        assert prog_keys <= set(r), r
        assert r["prog_verified"] is True, r
        assert r["prog_runs"] == r["prog_iterations"] > 0 and r["prog_ns"] > 0, r
    else:
        assert not prog_keys & set(r), r
    assert ("handler_added_pct" in r) == (r["program"] == "handler"), r
    keys = set(r) - {"loss_pct", "vs_empty_pct", "vs_bpftrace", "handler_added_pct"} - prog_keys
    assert keys == row_keys, (sorted(keys ^ row_keys), r)
    assert r["iterations"] > 0 and r["samples"] == cfg["repeats"], r
    assert r["events_per_sec"] > 0 and r["wall_events_per_sec"] > 0 and r["ns_per_event"] > 0, r
    if r["program"] in ("handler", "bpftrace") or r["mechanism"] == "watchpoint":
        # what the probe counted is the workload's own count of calls, exactly
        assert r["count"] == r["iterations"] and r["verified"] is True, r
    else:
        assert r["count"] is None and r["verified"] is None, r
    if r["program"] == "handler":
        assert "vs_empty_pct" in r and "vs_bpftrace" in r, r
    assert ("loss_pct" in r) == (cfg["workload"] == "math"), r
if len(sys.argv) > 2:
    exec(sys.argv[2])
EOF
check_rows() {
	python3 "$TRASH/check_rows.py" "$@"
}

test_expect_success 'bench --quick -j: every mechanism, every count equals the workload count' '
	dbtap bench --quick -j >quick.json 2>quick.err &&
	check_rows quick.json "
names = [\"baseline\", \"syscall\", \"uprobe-nop\", \"uprobe-push\", \"uprobe-nop5\",
         \"uprobe-mov\", \"uretprobe-nop\", \"uretprobe-push\", \"uretprobe-nop5\", \"usdt\",
         \"usdt-semaphore\", \"watchpoint\"]
got = [(r[\"mechanism\"], r[\"program\"]) for r in rows]
want = []
for n in names:
    if n in (\"baseline\", \"syscall\"):
        want.append((n, \"none\"))
        continue
    if n == \"watchpoint\":
        want.append((n, \"none\"))
    want += [(n, \"handler\"), (n, \"empty\")]
assert got == want, got
assert cfg[\"workload\"] == \"trig\" and cfg[\"threads\"] == 1 and cfg[\"repeats\"] == 1, cfg
# uprobes, uretprobes and USDT (semaphore included) work on every machine dbtap
# supports: they must have been measured, not skipped
for r in rows:
    if r[\"mechanism\"].startswith((\"uprobe\", \"uretprobe\", \"usdt\")):
        assert r[\"available\"], r
"
'

test_expect_success 'the answer names verified rows of this run' '
	json_py "
rows = {(r[\"mechanism\"], r[\"program\"]): r for r in lines if r[\"report\"] == \"row\"}
a = d
for k in (\"server_function\", \"usdt_site\", \"call\", \"write_uprobe\", \"write_on_store\"):
    v = a[k]
    r = rows[(v[\"mechanism\"], v[\"program\"])]
    assert r[\"verified\"] and v[\"ns_per_event\"] == r[\"ns_per_event\"], (k, v, r)
# a server function starts with push %rbp, a USDT site is a nop: those rows, whatever
# is cheapest here
assert a[\"server_function\"][\"mechanism\"] == \"uprobe-push\", a
assert a[\"server_function\"][\"program\"] == \"handler\", a
assert a[\"write_uprobe\"][\"mechanism\"] == \"uprobe-push\", a
assert a[\"usdt_site\"][\"mechanism\"] == \"usdt\", a
assert a[\"call\"][\"ns_per_event\"] == min(r[\"ns_per_event\"] for r in rows.values()
    if r[\"available\"] and r[\"verified\"] and r[\"mechanism\"] in
       (\"uprobe-nop\", \"uprobe-push\", \"uprobe-nop5\", \"usdt\", \"usdt-semaphore\")), a
" <quick.json
'

# advice_matches FILE MECHANISM RE: the advice line RE (its group: ns) gives the +ns of
# MECHANISM's handler row in the table of the same run, to its rounding.
advice_matches() {
	python3 - "$@" <<-\EOF
	import re, sys
	path, mech, pat = sys.argv[1:4]
	text = open(path).read().splitlines()
	row = [l.split() for l in text if l.split()[:2] == [mech, "handler"]]
	adv = [re.match(pat, l) for l in text if re.match(pat, l)]
	assert len(row) == 1 and len(adv) == 1, (row, adv, text)
	plus_ns = float(row[0][4])
	assert abs(int(adv[0].group(1)) - plus_ns) <= 0.55, (adv[0].group(0), row[0])
	EOF
}

test_expect_success 'the text table shows every row and the answer' '
	dbtap bench --quick uprobe-nop usdt >quick.txt 2>quick.err &&
	test_grep "^baseline  *none " quick.txt &&
	test_grep "^uprobe-nop  *handler .* ok  " quick.txt &&
	test_grep "^usdt  *empty " quick.txt &&
	test_grep "^server functions start with push %rbp: run uprobe-push to measure" quick.txt &&
	advice_matches quick.txt usdt "^USDT sites are a nop: usdt, ([0-9]+) ns per hit over the baseline$"
'

test_expect_success 'a progress line per run on stderr; the advice names uprobe-push for a server function' '
	dbtap bench -d 0.05 -r 2 uprobe-push >push.txt 2>push.err &&
	cat >push.want <<-\EOF &&
	# baseline none: repeat 1/2
	# uprobe-push handler: repeat 1/2
	# uprobe-push empty: repeat 1/2
	# uprobe-push empty: repeat 2/2
	# uprobe-push handler: repeat 2/2
	# baseline none: repeat 2/2
	# uprobe-push handler: BPF statistics run 1/2
	# uprobe-push empty: BPF statistics run 1/2
	# uprobe-push empty: BPF statistics run 2/2
	# uprobe-push handler: BPF statistics run 2/2
	EOF
	grep "^# " push.err >push.got &&
	test_cmp push.want push.got &&
	advice_matches push.txt uprobe-push "^server functions start with push %rbp: uprobe-push, ([0-9]+) ns per call over the baseline$"
'

test_expect_success '--threads 3: per-CPU counts add up to the calls of all threads' '
	dbtap bench --quick -j --threads 3 uprobe-nop usdt-semaphore watchpoint >threads.json &&
	check_rows threads.json "
assert cfg[\"threads\"] == 3, cfg
assert [r[\"mechanism\"] for r in rows if r[\"program\"] == \"handler\"] == [
    \"uprobe-nop\", \"usdt-semaphore\", \"watchpoint\"], rows
"
'

test_expect_success '--workload math: the blog loop, counted, with its loss' '
	dbtap bench --quick -j --workload math >math.json &&
	check_rows math.json "
assert cfg[\"workload\"] == \"math\", cfg
assert sorted({r[\"mechanism\"] for r in rows}) == [\"baseline\", \"uprobe-mov\", \"uprobe-nop\",
                                                   \"watchpoint\"], rows
for r in rows:
    if r[\"available\"]:
        assert \"loss_pct\" in r, r
        assert (r[\"loss_pct\"] is None) == (r[\"mechanism\"] == \"baseline\"), r
"
'

test_expect_success 'an unknown mechanism is a usage error naming it, with a hint' '
	test_expect_code 2 dbtap bench uprobe-nopp 2>err &&
	test_grep "unknown mechanism .uprobe-nopp." err &&
	test_grep "^hint: did you mean .uprobe-nop." err
'

test_expect_success 'bad option values are usage errors' '
	test_expect_code 2 dbtap bench --threads 0 2>err1 &&
	test_grep "bad thread count .0." err1 &&
	test_expect_code 2 dbtap bench -d soon 2>err2 &&
	test_grep "bad duration .soon." err2 &&
	test_grep "^hint: " err2 &&
	test_expect_code 2 dbtap bench --workload disk 2>err3 &&
	test_grep "bad workload .disk." err3 &&
	test_expect_code 2 dbtap bench --frobnicate 2>err4
'

test_expect_success '--vs-bpftrace without bpftrace says so and measures nothing' '
	mkdir -p emptybin &&
	PATH="$PWD/emptybin" test_expect_code 1 "$DBTAP" bench --quick --vs-bpftrace >out 2>err &&
	test_grep "bpftrace is not installed" err &&
	test_grep "^hint: install it" err &&
	test_must_fail test -s out
'

if command -v bpftrace >/dev/null; then
	test_expect_success '--vs-bpftrace: bpftrace counts the same calls, side by side' '
		dbtap bench --quick -j --vs-bpftrace uprobe-nop >bt.json &&
		check_rows bt.json "
assert cfg[\"bpftrace\"].startswith(\"bpftrace\"), cfg
bt = [r for r in rows if r[\"program\"] == \"bpftrace\"]
assert len(bt) == 1 and bt[0][\"available\"] and bt[0][\"verified\"], bt
h = [r for r in rows if r[\"program\"] == \"handler\"][0]
assert abs(h[\"vs_bpftrace\"] - h[\"ns_per_event\"] / bt[0][\"ns_per_event\"]) < 1e-3 * h[\"vs_bpftrace\"], h
"
	'
else
	test_skip '--vs-bpftrace: bpftrace counts the same calls' 'bpftrace is not installed'
fi

# slots_count: how many 8-byte write breakpoints this process can open now (0-4). The
# kernel grants a per-task breakpoint only where a slot is free on every CPU, so
# per-CPU breakpoints of any tool, a leftover of ours included, lower the count.
slots_count() {
	python3 -c '
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
buf = [ctypes.c_uint64(0) for _ in range(4)]
fds = []
for b in buf:
    # perf_event_attr VER1 (72 bytes): type 5 = PERF_TYPE_BREAKPOINT,
    # exclude_kernel|exclude_hv, bp_type 2 = W, bp_len 8
    attr = struct.pack("IIQQQQQIIQQ", 5, 72, 0, 0, 0, 0, (1 << 5) | (1 << 6), 0, 2,
                       ctypes.addressof(b), 8)
    a = ctypes.create_string_buffer(attr)
    fd = libc.syscall(298, a, 0, -1, -1, 0)
    if fd < 0:
        break
    fds.append(fd)
print(len(fds))
'
}

# slots_back N: at least N slots can be opened again (other test suites on the machine
# may hold one for a moment: retry for 10 s).
slots_back() {
	local n i
	for i in $(seq 1 20); do
		n=$(slots_count)
		[ "$n" -ge "$1" ] && return 0
		sleep 0.5
	done
	echo "only $n breakpoint slots can be opened, $1 could before"
	return 1
}

# hold_slots: takes every hardware breakpoint slot on every CPU (per-CPU breakpoints,
# as a debugger or another tracer would), prints "holding", then keeps taking any slot
# another tool frees (printing "grabbed": a slot was free for a moment) until killed.
# exec: the background job is the holder itself, so killing $! frees the slots.
hold_slots() {
	exec python3 -c '
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
buf = [ctypes.c_uint64(0) for _ in range(4)]
def take():
    n = 0
    for cpu in range(os.cpu_count()):
        for b in buf:
            attr = struct.pack("IIQQQQQIIQQ", 5, 72, 0, 0, 0, 0, (1 << 5) | (1 << 6), 0, 2,
                               ctypes.addressof(b), 8)
            a = ctypes.create_string_buffer(attr)
            if libc.syscall(298, a, -1, cpu, -1, 0) >= 0:
                n += 1
    return n
print("holding %d" % take(), flush=True)
while True:
    if take():
        print("grabbed", flush=True)
    time.sleep(0.001)
'
}

# held_run OUT ARGS...: runs dbtap ARGS while no slot is free (hold_slots takes those
# other tracers leave); fails (status 3) when one could still be taken (a task of
# another tool holds a per-task breakpoint: then a per-CPU one cannot take its slot)
# or one was free at some moment of the run, so the caller can try again.
held_run() {
	local out=$1 holder rc
	shift
	hold_slots >hold.out &
	holder=$!
	for i in $(seq 1 100); do
		grep -q holding hold.out && break
		sleep 0.05
	done
	# every slot free on some CPU is held now (other tracers may hold the rest)
	if ! grep -q "^holding" hold.out || [ "$(slots_count)" != 0 ]; then
		kill $holder
		wait $holder 2>/dev/null
		return 3
	fi
	dbtap "$@" >"$out" 2>"$out.err"
	rc=$?
	kill $holder
	wait $holder 2>/dev/null
	grep -q grabbed hold.out && return 3
	return $rc
}

test_expect_success 'no free breakpoint slot: the watchpoint rows are not available, with the reason' '
	for try in $(seq 1 20); do
		held_run held.json bench --quick -j baseline watchpoint uprobe-nop
		rc=$?
		test $rc = 3 || break
		sleep 0.5
	done &&
	{ test $rc != 3 || { echo "could not hold every slot: other tools held some"; cat hold.out; false; }; } &&
	test $rc = 0 &&
	check_rows held.json "
w = [r for r in rows if r[\"mechanism\"] == \"watchpoint\"]
assert len(w) == 3 and not any(r[\"available\"] for r in w), w
assert all(\"no free hardware breakpoint slot\" in r[\"reason\"] for r in w), w
assert [r[\"available\"] for r in rows if r[\"mechanism\"] == \"uprobe-nop\"] == [True, True], rows
assert ans[\"write_watchpoint\"] is None, ans
"
'

test_expect_success 'Ctrl-C mid run: the workload is reaped, nothing stays attached' '
	before=$(slots_count);
	"$DBTAP" bench -d 2 -j uprobe-nop watchpoint >int.json 2>int.err &
	pid=$! &&
	test -n "$before" &&
	child= &&
	for i in $(seq 1 100); do
		child=$(pgrep -P $pid -x dbtap-bench) && break
		sleep 0.05
	done &&
	test -n "$child" &&
	sleep 0.5 &&
	kill -INT $pid &&
	wait $pid &&
	test_must_fail kill -0 $child 2>/dev/null &&
	test_must_fail pgrep -P $pid &&
	json_py "assert d[\"report\"] == \"summary\" and d[\"end\"] == \"interrupted\", d" <int.json &&
	slots_back $before
'

test_expect_success 'SIGKILL of dbtap: the workload dies with it' '
	"$DBTAP" bench -d 2 uprobe-nop >/dev/null 2>&1 &
	pid=$! &&
	child= &&
	for i in $(seq 1 100); do
		child=$(pgrep -P $pid -x dbtap-bench) && break
		sleep 0.05
	done &&
	test -n "$child" &&
	kill -KILL $pid &&
	wait $pid;
	gone() { ! test -d /proc/$child || grep -q ") Z " /proc/$child/stat; } &&
	for i in $(seq 1 40); do
		gone && break
		sleep 0.05
	done &&
	gone
'

test_done
