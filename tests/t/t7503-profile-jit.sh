#!/bin/bash
test_description='dbtap profile: code made at run time named from /tmp/perf-PID.map and jitdump files, or shown by address'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

W=$WORKLOADS/jitloop
[ -x "$W" ] || test_bail "$W is not built: run make"

JL_PID=
jitloop_start() {
	local out=$1 i
	shift
	# in a session of its own for its share of a loaded machine's CPU (profile.sh)
	setsid "$W" "$@" >"$out" &
	JL_PID=$!
	for i in $(seq 1 100); do
		if grep -q "^ready" "$out" 2>/dev/null; then
			JL_ADDR=$(awk "/^ready/ { print \$3 }" "$out")
			return 0
		fi
		sleep 0.02
	done
	echo "jitloop did not start"
	return 1
}
jitloop_stop() {
	[ -n "$JL_PID" ] && kill "$JL_PID" 2>/dev/null && wait "$JL_PID" 2>/dev/null
	rm -f "/tmp/perf-$JL_PID.map"
	JL_PID=
	return 0
}
test_atexit jitloop_stop

# Every stack is main -> jit_driver -> the JIT code, named as the test expects, or
# main -> jit_driver alone: a sample of the driver loop itself. Those land at the
# instruction after the call returns (the return stalls the pipeline) more often
# than its share of instructions says: about 3 in 1,000 samples at load 4. They
# must stay rare, and no other shape (an unnamed JIT frame, a lost caller) passes.
JIT_STACKS_PY='
def check_jit_stacks(stacks, is_jit_leaf):
    assert stacks
    total = driver = 0
    for f, c in stacks:
        total += c
        below = f[f.index("main"):]
        if below == ["main", "jit_driver"]:
            driver += c
            continue
        assert below[:-1] == ["main", "jit_driver"] and is_jit_leaf(below[-1]), f
    assert driver <= total // 20, (driver, total)
'

test_expect_success 'a perf map names the JIT function; the stack goes on below it' '
	jitloop_start j1.out map &&
	test -s /tmp/perf-$JL_PID.map &&
	dbtap profile -p $JL_PID -d 2 --user -o j1.folded -j >j1.json 2>j1.err &&
	jitloop_stop &&
	folded_py "$JIT_STACKS_PY
check_jit_stacks(stacks, lambda leaf: leaf == \"jit_hot_loop\")
" <j1.folded &&
	json_py "
f = {x[\"name\"]: x for x in d[\"types\"][0][\"functions\"]}
assert f[\"jit_hot_loop\"][\"kind\"] == \"jit\", f
driver = f[\"jit_driver\"][\"self\"] if \"jit_driver\" in f else 0
assert f[\"jit_hot_loop\"][\"self\"] + driver == d[\"samples\"], (f, d[\"samples\"])
assert driver <= d[\"samples\"] // 20, (f, d[\"samples\"])
" <j1.json
'

test_expect_success 'a jitdump file the process mapped names the JIT function' '
	mkdir -p jd &&
	jitloop_start j2.out dump "$TRASH/jd" &&
	test -s jd/jit-$JL_PID.dump &&
	grep -q "jit-$JL_PID.dump" /proc/$JL_PID/maps &&
	dbtap profile -p $JL_PID -d 2 --user --folded >j2.folded 2>j2.err &&
	jitloop_stop &&
	folded_py "$JIT_STACKS_PY
check_jit_stacks(stacks, lambda leaf: leaf == \"jitdump_hot_loop\")
" <j2.folded
'

test_expect_success 'without a map the JIT frames are kept, as their addresses' '
	jitloop_start j3.out map &&
	rm -f /tmp/perf-$JL_PID.map &&
	dbtap profile -p $JL_PID -d 2 --user --folded >j3.folded 2>j3.err &&
	jitloop_stop &&
	folded_py "$JIT_STACKS_PY
import re
addr = int(\"$JL_ADDR\", 16)
def at_jit_code(leaf):
    m = re.fullmatch(r\"\\[anon:0x([0-9a-f]+)\\]\", leaf)
    return bool(m) and addr <= int(m.group(1), 16) < addr + 15
check_jit_stacks(stacks, at_jit_code)
" <j3.folded
'

test_expect_success 'the vDSO is named from the kernel'"'"'s image' '
	# in its loop (python starts slowly on a loaded machine), in a session of its own
	bg_run vd.out setsid python3 -c "
import time
print(\"ready\", flush=True)
while True:
    time.clock_gettime(time.CLOCK_MONOTONIC)
" &&
	vd=$BG_PID &&
	for i in $(seq 1 200); do grep -q ready vd.out && break; sleep 0.05; done &&
	grep -q ready vd.out &&
	dbtap profile -p $vd -d 2 -F 499 --user --folded >vd.folded 2>vd.err &&
	kill $vd &&
	folded_py "
leaves = {}
for f, c in stacks:
    leaves[f[-1]] = leaves.get(f[-1], 0) + c
vdso = {k: v for k, v in leaves.items() if \"vdso\" in k or \"clock_gettime\" in k}
print(vdso)
assert not [k for k in leaves if k.startswith(\"[vdso\")], leaves
# by its global name (x86-64: __vdso_, arm64: __kernel_), as perf names it, not the weak alias
assert \"__vdso_clock_gettime\" in vdso or \"__kernel_clock_gettime\" in vdso, leaves
" <vd.folded
'

BP_PIDS=
bp_stop() {
	[ -n "$BP_PIDS" ] && kill $BP_PIDS 2>/dev/null
	BP_PIDS=
	return 0
}
test_atexit bp_stop

# bg_split OUT ERR CMD...: CMD in the background, stdout and stderr apart; BG_PID
# (a program, not the dbtap function: a signal to the subshell that runs a function
# would not reach dbtap)
bg_split() {
	local out=$1 err=$2
	shift 2
	"$@" >"$out" 2>"$err" &
	BG_PID=$!
	return 0
}

# A BPF program loaded while the profile runs (another tool starting) is not in the
# /proc/kallsyms read at the start, which has no sizes: its samples were named after
# the program before it (dbtap's own profile_perf). The second dbtap here samples dd's
# every syscall entry through a raw tracepoint, whose program runs in dd's context
# under bpf_trace_run2; the first, ended while the second still runs, must name it
# as kallsyms then does.
test_expect_success 'a BPF program loaded during the profile is named as kallsyms names it' '
	bg_run dd.out dd if=/dev/zero of=/dev/null bs=1 count=4000000000 &&
	dd=$BG_PID &&
	BP_PIDS=$dd &&
	bg_split bp.folded bp.err dbtap profile -v -p $dd -F 999 -d 3 --folded &&
	a=$BG_PID &&
	# the second program loads once the first has read kallsyms (-v says when)
	for i in $(seq 1 400); do grep -q "kernel symbols:" bp.err && break; sleep 0.05; done &&
	grep -q "kernel symbols:" bp.err &&
	bg_split bp2.out bp2.err "$DBTAP" profile -p $dd -e tp:raw_syscalls:sys_enter -d 20 &&
	b=$BG_PID &&
	BP_PIDS="$dd $b" &&
	for i in $(seq 1 200); do grep -q tracing bp2.err && break; sleep 0.05; done &&
	grep -q tracing bp2.err &&
	wait $a &&
	awk "\$3 ~ /^bpf_prog_/ { print \$3 }" /proc/kallsyms >bp.kallsyms &&
	kill -INT $b && wait $b; bp_stop &&
	folded_py "
names = set(open(\"bp.kallsyms\").read().split())
under = {}
for f, c in stacks:
    for i in range(len(f) - 1):
        if f[i] == \"bpf_trace_run2\":
            under[f[i + 1]] = under.get(f[i + 1], 0) + c
print(under)
# the second profile'"'"'s program, by the name kallsyms has for it now
assert [k for k in under if k.endswith(\"_profile_raw_tp\") and k in names], (under, names)
# never a perf-event program: none runs under a raw tracepoint
assert not [k for k in under if k.endswith(\"_profile_perf\")], under
" <bp.folded
'

test_done
