#!/bin/bash
# t2200: bad targets: clear errors naming the input, a hint, exit 2 (usage) or 1 (run time).
test_description='--pg, -p and -t with bad input: messages and exit statuses'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

# expect_error STATUS WORD CMD...: exits STATUS, stderr names WORD and has a hint line,
# stdout stays empty.
expect_error() {
	local want=$1 word=$2
	shift 2
	test_expect_code "$want" "$@" >out 2>err &&
	cat err &&
	test_grep "^error: .*$word" err &&
	test_grep "^hint: " err &&
	test ! -s out
}

test_expect_success '--pg of a directory that is not a data directory: exit 2' '
	mkdir notdata &&
	expect_error 2 "notdata.*not a PostgreSQL data directory" dbtap pg --pg notdata &&
	expect_error 2 "notdata" dbtap doctor --pg notdata
'

test_expect_success '--pg of a missing path or a file: exit 2' '
	expect_error 2 "/nonexistent/data" dbtap pg --pg /nonexistent/data &&
	echo >afile &&
	expect_error 2 "afile.*not a directory" dbtap pg --pg afile
'

test_expect_success '--pg of a number no cluster has: exit 1; of a huge one: exit 2' '
	expect_error 1 "port or postmaster pid 1\$" dbtap pg --pg 1 &&
	expect_error 2 "99999999999" dbtap pg --pg 99999999999
'

test_expect_success 'a data directory whose postmaster was killed: stale postmaster.pid, exit 1' '
	pg_start stale &&
	pid=$PG_PID &&
	kill -9 $pid &&
	for i in $(seq 1 100); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done &&
	! kill -0 $pid 2>/dev/null &&
	test -f "$PGDATA/postmaster.pid" &&
	expect_error 1 "stale postmaster.pid in .*$pid is not running" dbtap pg --pg "$PGDATA" &&
	expect_error 1 "stale postmaster.pid" dbtap doctor --pg "$PGDATA"
'

test_expect_success 'the dead cluster is not listed, not even through its orphans' '
	for i in $(seq 1 50); do
		n=$(for p in $(pgrep -u postgres); do readlink /proc/$p/cwd; done |
		    grep -cx "$(realpath "$PGDATA")")
		[ "$n" = 0 ] && break
		dbtap pg -j >list.json &&
		json_py "assert all(c[\"datadir\"] != \"$(realpath "$PGDATA")\" for c in lines)" \
			<list.json || return 1
		sleep 0.1
	done &&
	dbtap pg -j >list.json &&
	json_py "assert all(c[\"datadir\"] != \"$(realpath "$PGDATA")\" for c in lines)" <list.json
'

test_expect_success 'a data directory with no server (no postmaster.pid): exit 1' '
	rm "$PGDATA/postmaster.pid" &&
	expect_error 1 "no PostgreSQL server runs on data directory" dbtap pg --pg "$PGDATA"
'

test_expect_success '-p of a pid that does not exist: exit 1, names it' '
	pid=$(($(cat /proc/sys/kernel/pid_max) + 1)) &&
	expect_error 1 "no process with pid $pid" dbtap doctor -p $pid &&
	expect_error 1 "no thread with id $pid" dbtap doctor -t $pid
'

test_expect_success '-p of a kernel thread or a zombie: not traceable, exit 1' '
	kpid=$(ps -e -o pid=,args= | awk "\$2 ~ /^\\[/ { print \$1; exit }") &&
	test -n "$kpid" &&
	expect_error 1 "pid $kpid cannot be traced" dbtap doctor -p $kpid &&
	perl -e "if (my \$p = fork) { print \"\$p\\n\"; sleep 5 } else { exit 0 }" >zpid &
	for i in $(seq 1 50); do
		[ -s zpid ] && [ "$(ps -o stat= -p $(cat zpid))" = Z ] && break
		sleep 0.1
	done &&
	expect_error 1 "pid $(cat zpid) cannot be traced" dbtap doctor -p $(cat zpid)
	rc=$?
	kill %% 2>/dev/null
	wait
	test $rc = 0
'

test_expect_success 'malformed pids and thread ids: exit 2, naming the word' '
	expect_error 2 "'"'abc'"' is not a pid" dbtap doctor -p abc &&
	expect_error 2 "'"'x1'"' is not a pid" dbtap doctor -p $$,x1 &&
	expect_error 2 "'"'-5'"' is not a pid" dbtap doctor -p -5 &&
	expect_error 2 "empty pid in -p '"'1,,2'"'" dbtap doctor -p 1,,2 &&
	expect_error 2 "empty pid in -p '"'$$,'"'" dbtap doctor -p $$, &&
	expect_error 2 "'"'1.5'"' is not a thread id" dbtap doctor -t 1.5
'

test_expect_success 'two targets at once: exit 2' '
	expect_error 2 "give only one" dbtap doctor -p $$ -t $$ &&
	expect_error 2 "give only one" dbtap doctor --pg "$PGDATA" -p $$
'

# Root, yet pid 1 cannot be read (a container's init, a process holding more
# privileges): "run as root" would be no answer.
test_lazy_prereq ROOT_DENIED_PID1 'test "$(id -u)" = 0 && ! readlink /proc/1/exe'

test_expect_success ROOT_DENIED_PID1 'root denied a process: says so, not "run as root"' '
	expect_error 1 "pid 1 cannot be traced: permission denied" dbtap watch xid -p 1 -d 0.2 &&
	test_grep "^hint: dbtap runs as root, yet the kernel refuses it" err &&
	! grep -q "hint: run dbtap as root" err
'

test_expect_success 'not root, a process of another user: the hint is to run as root' '
	sleep 30 &
	spid=$! &&
	test_when_finished "kill $spid" &&
	expect_error 1 "pid $spid cannot be traced: permission denied" dbtap_as nobody count -p $spid uprobe:/bin/sleep:main -d 0.2 &&
	test_grep "^hint: run dbtap as root" err
'

test_done
