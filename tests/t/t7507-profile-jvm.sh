#!/bin/bash
test_description='dbtap profile: a JVM'"'"'s compiled method named from its perf map, its threads by their names'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/profile.sh

command -v java >/dev/null && command -v jcmd >/dev/null ||
	test_skip_all "java is not installed (make deps installs openjdk-17-jdk-headless)"
[ -f "$WORKLOADS/HotLoop.class" ] || test_bail "$WORKLOADS/HotLoop.class is not built: run make"

JVM_PID=
jvm_stop() {
	[ -n "$JVM_PID" ] && kill -KILL "$JVM_PID" 2>/dev/null && wait "$JVM_PID" 2>/dev/null
	rm -f "/tmp/perf-$JVM_PID.map"
	JVM_PID=
	return 0
}
test_atexit jvm_stop

test_expect_success 'the hot method by the name in the JVM'"'"'s perf map; threads by their names' '
	# G1 (its threads have names of their own); frame pointers kept in compiled code so
	# that stacks go on below it; each compilation printed, to wait for the final one
	java -XX:+UseG1GC -Xmx64m -XX:+PreserveFramePointer -XX:+PrintCompilation \
		-cp "$WORKLOADS" HotLoop >jvm.out 2>&1 &
	JVM_PID=$! &&
	# tier 4 (C2), not on-stack replacement (a "%" before the tier)
	for i in $(seq 1 300); do
		grep -qE "^ +[0-9]+ +[0-9]+ +4 +HotLoop::spin " jvm.out && break
		sleep 0.1
	done &&
	grep -E "HotLoop::spin" jvm.out &&
	grep -qE "^ +[0-9]+ +[0-9]+ +4 +HotLoop::spin " jvm.out &&
	jcmd $JVM_PID Compiler.perfmap >jcmd.out &&
	test -s /tmp/perf-$JVM_PID.map &&
	cp /tmp/perf-$JVM_PID.map perf.map &&
	dbtap profile -p $JVM_PID -F 499 -d 2 --by thread -j >j.json 2>j.err &&
	for t in /proc/$JVM_PID/task/*; do echo "${t##*/} $(cat $t/comm)"; done >comms &&
	jvm_stop &&
	json_py "
comm = dict(l.split(\" \", 1) for l in open(\"comms\").read().splitlines())
jit = set(l.split(\" \", 2)[2] for l in open(\"perf.map\").read().splitlines())
threads = {p[\"thread\"]: p for p in d[\"processes\"]}
print(sorted((n, p[\"samples\"]) for n, p in threads.items()))
# every thread by the name the kernel has for it
for name, p in threads.items():
    assert comm[str(p[\"tid\"])] == name, (p, comm.get(str(p[\"tid\"])))
hot = threads[\"hot-worker\"]
f = hot[\"functions\"]
top = max(f, key=lambda x: x[\"self\"])
# it runs nothing but the method: named from the map of the JVM, most of the samples of the thread
assert top[\"name\"] == \"long HotLoop.spin(long)\" and top[\"kind\"] == \"jit\", f
assert top[\"name\"] in jit and top[\"self_pct\"] > 80, top
assert all(x[\"name\"] in jit for x in f if x[\"kind\"] == \"jit\"), f
# below it the interpreted lambda and the thread start of the JVM, through frame pointers
total = {x[\"name\"]: x[\"total\"] for x in hot[\"functions\"]}
assert total.get(\"start_thread\", 0) >= 0.9 * hot[\"samples\"], total
assert \"alloc-worker\" in threads, threads.keys()
# the threads of the collector, named by the JVM
assert [n for n in threads if n.startswith((\"GC Thread\", \"G1 \"))], threads.keys()
" <j.json
'

test_done
