#!/bin/bash
test_description='dbtap profile -e: page faults by tracepoint and software event, context switches; every hit a sample'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

W=$WORKLOADS/pagetouch
[ -x "$W" ] || test_bail "$W is not built: run make"

# touch_run OUT K EVENT: profiles pagetouch K on EVENT while it touches its pages.
touch_run() {
	local out=$1 k=$2 ev=$3 pt i
	"$W" "$k" >"$out.pt" &
	pt=$!
	for i in $(seq 1 100); do grep -q "^ready" "$out.pt" && break; sleep 0.02; done
	trace_start "$out" profile -p $pt -e "$ev" --user -o "$out.folded" -j || return 1
	kill -USR1 $pt
	for i in $(seq 1 200); do grep -q "^touched" "$out.pt" && break; sleep 0.05; done
	trace_stop
	kill $pt
	wait $pt 2>/dev/null
	grep -q "^touched $k$" "$out.pt"
}

# samples_in FOLDED FUNCTION: samples whose leaf (user) frame is FUNCTION.
samples_in() {
	awk -v f="$2" '{ n = split($1, a, ";"); if (a[n] == f) s += $NF } END { print s + 0 }' "$1"
}

for ev in tp:exceptions:page_fault_user page-faults; do
	test_expect_success "-e $ev: one sample per fresh page, all in the touching function" '
		touch_run f0.json 0 '$ev' &&
		touch_run f1.json 3000 '$ev' &&
		test "$(samples_in f1.json.folded touch_pages)" = 3000 &&
		test "$(samples_in f0.json.folded touch_pages)" = 0 &&
		s0=$(json_py "print(d[\"samples\"])" <f0.json) &&
		s1=$(json_py "print(d[\"samples\"])" <f1.json) &&
		# the rest are the workload'"'"'s own faults (its printf, the signal), as without the touch
		extra=$((s1 - 3000 - s0)) &&
		echo "samples $s1 (without the touch $s0)" &&
		test $extra -ge -5 && test $extra -le 5 &&
		json_py "assert d[\"lost\"][\"total\"] == 0 and d[\"event\"] == \"'$ev'\", d" <f1.json
	'
done

test_expect_success '-e context-switches: a sample at every sleep, in the scheduler (--kernel)' '
	bg_run fl.out "$WORKLOADS/funcloop" -s 2000 200 &&
	fl=$BG_PID &&
	sleep 0.2 &&
	trace_start cs.json profile -p $fl -e context-switches --kernel -o cs.folded -j &&
	kill -USR1 $fl &&
	wait $fl &&
	trace_stop &&
	test_grep "^calls 200" fl.out &&
	nvcsw=$(sed -n "s/^voluntary_switches //p" fl.out) &&
	nivcsw=$(sed -n "s/^involuntary_switches //p" fl.out) &&
	echo "switches in the loop: $nvcsw voluntary, $nivcsw involuntary" &&
	json_py "
# a sample at every switch in the loop, and at a few before and after it
assert $nvcsw + $nivcsw <= d[\"samples\"] <= $nvcsw + $nivcsw + 50, (d[\"samples\"], $nvcsw, $nivcsw)
assert d[\"period\"] == 1, d
" <cs.json &&
	folded_py "
# every sleep switches out inside the nanosleep: once, or again after a wakeup that
# was not from its timer; the kernel counted each as a voluntary switch of the loop.
# On a busy machine a sleep whose timer fired before it reached schedule() can still
# switch out there (another task picked): the kernel counts that one involuntary.
sleeps = sum(c for f, c in stacks if \"do_nanosleep\" in f and f[-1] == \"schedule\")
assert $nvcsw >= 200 and $nvcsw <= sleeps <= $nvcsw + $nivcsw, (sleeps, $nvcsw, $nivcsw, stacks[:3])
" <cs.folded
'

test_expect_success '-c N: one sample every N events' '
	touch_run c1.json 3000 page-faults &&
	bg_run c2.pt "$W" 3000 &&
	pt=$BG_PID &&
	for i in $(seq 1 100); do grep -q "^ready" c2.pt && break; sleep 0.02; done &&
	trace_start c2.json profile -p $pt -e page-faults -c 100 --user -o c2.folded -j &&
	kill -USR1 $pt &&
	for i in $(seq 1 200); do grep -q "^touched" c2.pt && break; sleep 0.05; done &&
	trace_stop && kill $pt &&
	n=$(samples_in c2.folded touch_pages) &&
	echo "touch samples at -c 100: $n" &&
	test $n -ge 29 && test $n -le 31
'

test_done
