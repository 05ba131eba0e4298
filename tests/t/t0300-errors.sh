#!/bin/bash
test_description='bad input of every kind: exit status, an error naming it, a hint; docs/errors.md is made from this'
. "$(dirname "$0")"/../lib/test-lib.sh

# One bad input a line: EXIT<tab>KIND<tab>WORD<tab>ARGS. WORD must appear in the error
# line (the input is named); ARGS are shell words ($SPID: a live process of ours; it
# is written PID in the table, so the table does not change from run to run). KIND
# "permission" runs dbtap as nobody, on a process nobody may not trace; "no LIBRARY"
# runs it where that library, loaded only by the commands that use it, reads as empty
# (/dev/null bound over it in a mount namespace of its own).
cat >inputs.tsv <<'ROWS'
2	option	--nosuch	--nosuch
2	option	--nosuch	count --nosuch
2	option	-x	stat -x
2	option	--top	stat --top 0
2	option	--top	stat --top many
2	option	--by	count --by nosuch uprobe:/bin/true:main
2	option	--per	stat --per nosuch
2	option	--by	stat --by nosuch
2	option	--sort	profile --sort children -p $SPID
2	option	--max-probes	count --max-probes 0 'uprobe:/bin/true:*'
2	option	--sort	wait --sort nosuch
2	target	abc	doctor -p abc
2	target	x1	doctor -p $SPID,x1
2	target	-5	doctor -p -5
2	target	0	doctor -p 0
2	target	1,,2	doctor -p 1,,2
2	target	$SPID,	doctor -p $SPID,
2	target	 1	doctor -p ' 1'
2	target	1.5	doctor -t 1.5
2	target	give only one	doctor -p $SPID -t $SPID
1	target	2147483647	doctor -p 2147483647
1	target	2147483647	doctor -t 2147483647
2	target	notdata	pg --pg notdata
2	target	/nonexistent	pg --pg /nonexistent
2	target	needs a target	watch 0x1000:8
2	probe spec	kprobe:x	count kprobe:x
2	probe spec	usdt:x	count usdt:x
2	probe spec	uprobe::f	count uprobe::f
2	probe spec	uprobe:a:b:c	count uprobe:a:b:c
2	probe spec	/nonexistent	count uprobe:/nonexistent/bin:f
1	probe spec	/etc/passwd	count uprobe:/etc/passwd:f
2	probe spec	nosuchfunction	count uprobe:/bin/true:nosuchfunction
2	probe spec	/usr/bin/true	count usdt:/bin/true:prov:name
2	probe spec	count needs	count
2	probe spec	latency needs	latency
2	probe spec	'a'	latency a
2	watch expression	sym:3	watch sym:3 -p $SPID
2	watch expression	sym:16	watch sym:16 -p $SPID
2	watch expression	sym:8:4	watch sym:8:4 -p $SPID
2	watch expression	sym:r	watch sym:r -p $SPID
2	watch expression	sym:q	watch sym:q -p $SPID
2	watch expression	sym:1:2:3	watch sym:1:2:3 -p $SPID
2	watch expression	123	watch 123 -p $SPID
2	watch expression	0xZZ	watch 0xZZ -p $SPID
2	watch expression	sym+x	watch sym+x -p $SPID
2	watch expression	sym junk	watch 'sym junk' -p $SPID
2	watch expression	18446744073709551608	watch 'ShmemVariableCache->18446744073709551608:8' -p $SPID
2	watch expression	0xfffffffffffffff8	watch 'SYMBOL+0xfffffffffffffff8' -p $SPID
2	watch expression	0xffffffffffffffff	watch 0xffffffffffffffff:8 -p $SPID
2	watch expression	fn:x:4	watch fn:x:4 -p $SPID
2	histogram	linear:0:18446744073709551615:1	tps --hist linear:0:18446744073709551615:1
2	histogram	linear::0:10:1	tps --hist linear::0:10:1
2	histogram	linear:0:10:1:	tps --hist linear:0:10:1:
2	histogram	linear:0:1000:0	tps --hist linear:0:1000:0
2	histogram	linear:10:5:1	tps --hist linear:10:5:1
2	histogram	linear:0:100000:1	tps --hist linear:0:100000:1
2	histogram	log3	tps --hist log3
2	histogram	linear:0:10	tps --hist linear:0:10
2	event list	instrctions	stat -e instrctions -p $SPID
2	event list	task-clock:x	stat -e task-clock:x -p $SPID
2	event list	task-clock,	stat -e task-clock, -p $SPID
2	event list	','	stat -e , -p $SPID
2	event list	task-clock	stat -e task-clock,task-clock -p $SPID
2	event list	cpu/foo/	stat -e cpu/foo/ -p $SPID
2	duration	nan	count -d nan uprobe:/bin/true:main
2	duration	'0'	count -d 0 uprobe:/bin/true:main
2	duration	1e-9	tps -d 1e-9
2	duration	0.001	tps -d 0.001
2	duration	-1	tps -d -1
2	duration	inf	tps -d inf
2	duration	1e9	tps -d 1e9
2	duration	10s	tps -d 10s
2	interval	nan	tps -i nan
2	interval	1e-9	tps -i 1e-9 -d 2
2	interval	-0.5	tps -i -0.5
2	duration	'0'	bench -d 0
2	file	fifo	stat -p $SPID --compare fifo
2	file	/dev/zero	stat -p $SPID --compare /dev/zero
2	file	dir	stat -p $SPID --compare dir
2	file	binary	stat -p $SPID --compare binary
2	file	big.json	stat -p $SPID --compare big.json
2	file	bad.json	stat -p $SPID --compare bad.json
2	file	zero.json	stat -p $SPID --compare zero.json
2	file	string.json	stat -p $SPID --compare string.json
2	file	negative.json	stat -p $SPID --compare negative.json
2	file	old.json	stat -p $SPID --compare old.json
2	file	nothere	stat -p $SPID --compare nothere
2	no libpfm.so.4	perf::page-faults	stat -e perf::page-faults -p $SPID
1	permission	$SPID	count -p $SPID uprobe:/bin/true:main
1	permission	$SPID	stat -p $SPID
1	permission	$SPID	watch 0x1000:8 -p $SPID
1	permission	$SPID	latency -p $SPID uprobe:/bin/true:main uretprobe:/bin/true:main
ROWS

test_expect_success 'set up the files and a process to name' '
	sleep 1000 &
	SPID=$! &&
	test_atexit "kill $SPID" &&
	mkfifo fifo && mkdir dir notdata &&
	printf "\177ELF\002\001\001\000rest" >binary &&
	truncate -s 17M big.json &&
	echo "not json" >bad.json &&
	ev="\"events\": {\"task-clock\": {\"counted\": true, \"value_ns\": 5}}" &&
	sum="\"report\": \"summary\", \"time_s\": 2, \"end\": \"duration\"" &&
	echo "{$sum, \"duration_s\": 0, $ev}" >zero.json &&
	echo "{$sum, \"duration_s\": \"10\", $ev}" >string.json &&
	echo "{$sum, \"duration_s\": 2, \"events\": {\"task-clock\": {\"value_ns\": -5}}}" >negative.json &&
	echo "{\"report\": \"total\", \"seconds\": 2, $ev}" >old.json
'

# Runs every row, checks it, and writes the table.
test_expect_success 'each bad input: its exit status, an error naming it, a hint, no output' '
	n=0 bad=0 &&
	{
		echo "# Bad input: what dbtap says" &&
		echo &&
		echo "Every bad input the test suite tries, with the exit status (2: bad usage, 1:" &&
		echo "failure at run time) and what dbtap prints on stderr: an error naming the input," &&
		echo "then a hint; nothing is printed on stdout. This page is" &&
		echo "written by \`tests/t/t0300-errors.sh\`, which fails when it differs from what dbtap" &&
		echo "prints; \`DBTAP_UPDATE_DOCS=1 make tap-test T=t0300-errors.sh\` rewrites it. PID" &&
		echo "stands for a live process." &&
		echo &&
		echo "| # | input | command | exit | error and hint |" &&
		echo "|---|---|---|---|---|"
	} >errors.md &&
	while IFS="	" read -r want kind word args; do
		n=$((n + 1)) &&
		eval "set -- $args" &&
		word=${word//\$SPID/$SPID} &&
		if [ "$kind" = permission ]; then
			dbtap_as nobody "$@" </dev/null >out 2>err
		elif [ "${kind#no }" != "$kind" ]; then
			lib=$(ldconfig -p | awk -v l="${kind#no }" "\$1 == l { print \$NF; exit }") &&
			lib=$(realpath "$lib") &&
			unshare -m sh -c "mount --bind /dev/null \"\$1\" && shift && exec timeout 20 \"\$@\"" \
				sh "$lib" "$DBTAP" "$@" </dev/null >out 2>err
		else
			timeout 20 "$DBTAP" "$@" </dev/null >out 2>err
		fi
		rc=$?
		msg=$(grep -m1 "^error: " err) hnt=$(grep -m1 "^hint: " err)
		if [ "$rc" != "$want" ] || [ -s out ] || [ -z "$hnt" ] ||
		   ! printf "%s\n" "$msg" | grep -qF -e "$word"; then
			echo "row $n: dbtap $args: exit $rc (want $want), stdout $(wc -c <out) bytes, word \"$word\":"
			cat err
			bad=$((bad + 1))
		fi
		cmd=$(printf "%s" "dbtap $args" | sed "s/\\\$SPID/PID/g") &&
		text=$(printf "%s<br>%s" "${msg#error: }" "${hnt#hint: }" | sed "s/\\b$SPID\\b/PID/g; s/|/\\\\|/g") &&
		[ "$kind" = permission ] && kind="permission (as nobody)"
		printf "| %d | %s | \`%s\` | %d | %s |\n" $n "$kind" "$cmd" $rc "$text" >>errors.md || return 1
	done <inputs.tsv &&
	echo "$n bad inputs, $bad wrong" &&
	test $n -ge 60 &&
	test $bad = 0
'

test_expect_success 'docs/errors.md is the table this test writes' '
	if [ -n "$DBTAP_UPDATE_DOCS" ]; then
		cp errors.md "$TEST_ROOT/docs/errors.md"
	fi &&
	if ! cmp -s errors.md "$TEST_ROOT/docs/errors.md"; then
		diff -u "$TEST_ROOT/docs/errors.md" errors.md
		echo "hint: DBTAP_UPDATE_DOCS=1 make tap-test T=t0300-errors.sh rewrites docs/errors.md"
		false
	fi
'

test_done
