#!/bin/bash
# t0000: the command line itself: help, version, unknown words.
test_description='dbtap --help, --version, unknown commands and options'
. "$(dirname "$0")"/../lib/test-lib.sh

test_expect_success 'dbtap --help lists every command and exits 0' '
	dbtap --help >out &&
	for c in doctor pg watch tps latency count stat bench; do
		grep -q "^  $c " out || { echo "missing $c"; return 1; }
	done
'

test_expect_success 'dbtap --version names the version from the Makefile' '
	dbtap --version >out &&
	want=$(sed -n "s/^VERSION *:= *//p" "$TEST_ROOT/Makefile") &&
	test -n "$want" &&
	grep -q "^dbtap $want " out
'

test_expect_success 'dbtap with no command is a usage error (2)' '
	test_expect_code 2 dbtap 2>err &&
	test_grep usage err
'

test_expect_success 'an unknown command exits 2 and names the word, with a hint' '
	test_expect_code 2 dbtap frobnicate >out 2>err &&
	test_grep "frobnicate" err &&
	test_grep "^hint: " err &&
	test ! -s out
'

test_expect_success 'an unknown global option exits 2 and names it' '
	test_expect_code 2 dbtap --frobnicate pg 2>err &&
	test_grep "frobnicate" err &&
	test_grep "^hint: " err
'

test_expect_success 'an unknown command option exits 2 and names it, for every command' '
	for c in doctor pg watch tps latency count stat profile record wait bench serve; do
		test_expect_code 2 dbtap $c --frobnicate >out 2>err || return 1
		test_grep "^error: .*frobnicate" err || return 1
		test_grep "^hint: " err || return 1
	done &&
	test_expect_code 2 dbtap doctor -Z 2>err &&
	test_grep "'"'-Z'"'" err
'

test_expect_success 'dbtap COMMAND --help prints its usage and exits 0, for every command' '
	for c in doctor pg watch tps latency count stat profile record wait bench serve; do
		dbtap $c --help >out || return 1
		test_grep "usage: dbtap $c" out || return 1
	done
'

test_expect_success '--help anywhere on the line: usage on stdout, nothing on stderr, exit 0' '
	for a in "stat -p 1 --help" "stat --by query -h" "count uprobe:x --help" "watch xid -h" \
		 "latency query --help" "bench pgbench --help" "profile --timeline --help" \
		 "tps -i 5 --help" "-j wait --help" "record -d 1 --help" "serve --help" \
		 "doctor -p 1 --help" "pg -h"; do
		dbtap $a >out 2>err || { echo "dbtap $a: exit $?"; return 1; }
		test_grep "^usage: dbtap " out || return 1
		test_must_be_empty err || return 1
	done
'

test_expect_success 'every option a synopsis names is in its options list, and -h is --help' '
	for c in doctor pg watch tps latency count stat profile record wait bench serve; do
		dbtap $c --help >h.$c || return 1
		dbtap $c -h >h2.$c || return 1
		test_cmp h.$c h2.$c || return 1
		sed -n "/^usage:/,/^$/p" h.$c | grep -o -- "--[a-z][a-z-]*" | sort -u >syn.$c
		sed -n "/^options:/,/^$/p" h.$c | grep -o -- "--[a-z][a-z-]*" | sort -u >opt.$c
		test -s syn.$c || return 1
		comm -23 syn.$c opt.$c >missing.$c
		test ! -s missing.$c || { echo "$c: $(cat missing.$c)"; return 1; }
	done
'

test_expect_success 'make install puts the binary and the docs under DESTDIR/PREFIX' '
	make -s -C "$TEST_ROOT" install DESTDIR="$TRASH/inst" PREFIX=/opt/dbtap >/dev/null &&
	"$TRASH"/inst/opt/dbtap/bin/dbtap --version >out &&
	test_grep "^dbtap " out &&
	for d in README.md architecture.md json.md doctor.md pg.md watch.md tps.md stat.md bench.md; do
		test -f "$TRASH"/inst/opt/dbtap/share/doc/dbtap/$d || return 1
	done
'

test_done
