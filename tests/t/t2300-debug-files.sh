#!/bin/bash
# t2300: symbols and DWARF from separate debug files (.gnu_debuglink, build-id).
test_description='a stripped binary finds its debug file by .gnu_debuglink and by build-id'
. "$(dirname "$0")"/../lib/test-lib.sh

SRC="$TEST_ROOT"/tests/workloads/symbols.c
command -v objcopy >/dev/null || test_skip_all "objcopy (binutils) is not installed"

# Runs BINARY until stdin closes and prints doctor -j's target object for it.
doctor_target() {
	local fifo=in.fifo pid
	rm -f $fifo && mkfifo $fifo &&
	{ "$1" <$fifo >/dev/null & pid=$!; } &&
	exec 9>$fifo &&
	dbtap doctor -j -p $pid >"$2"
	local rc=$?
	exec 9>&-
	wait $pid
	return $rc
}

test_expect_success 'a stripped copy with .gnu_debuglink to .debug/ gets DWARF from it' '
	gcc -g -O1 -o linked "$SRC" &&
	mkdir -p .debug &&
	objcopy --only-keep-debug linked .debug/linked.debug &&
	strip --strip-all linked &&
	objcopy --add-gnu-debuglink=.debug/linked.debug linked &&
	! readelf -S linked | grep -q "\.debug_info" &&
	doctor_target ./linked linked.json &&
	json_py "
t = d[\"target\"]
assert t[\"symbols\"] == \"debuginfo\", t
assert t[\"dwarf\"] is True, t
assert t[\"debug_file\"].endswith(\".debug/linked.debug\"), t
" <linked.json
'

test_expect_success 'the same binary without its debug file has neither' '
	mv .debug/linked.debug gone.debug &&
	doctor_target ./linked nodebug.json &&
	json_py "
t = d[\"target\"]
assert t[\"symbols\"] == \"dynsym\", t
assert t[\"dwarf\"] is False, t
assert t[\"debug_file\"] is None, t
" <nodebug.json
'

test_expect_success 'a debug file under /usr/lib/debug/.build-id is found by build-id' '
	gcc -g -O1 -Wl,--build-id -o byid "$SRC" &&
	bid=$(readelf -n byid | sed -n "s/.*Build ID: *//p") &&
	test -n "$bid" &&
	dir=/usr/lib/debug/.build-id/${bid:0:2} &&
	mkdir -p $dir &&
	objcopy --only-keep-debug byid $dir/${bid:2}.debug &&
	strip --strip-all byid &&
	doctor_target ./byid byid.json;
	rc=$?; rm -f $dir/${bid:2}.debug; test $rc = 0 &&
	json_py "
t = d[\"target\"]
assert t[\"build_id\"] == \"$bid\", t
assert t[\"symbols\"] == \"debuginfo\" and t[\"dwarf\"] is True, t
assert t[\"debug_file\"] == \"$dir/${bid:2}.debug\", t
" <byid.json
'

test_done
