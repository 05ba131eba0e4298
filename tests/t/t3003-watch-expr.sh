#!/bin/bash
test_description='dbtap watch EXPR -p: symbols, offsets, pointers, addresses, threads, filtering'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/watch.sh

# The workload: THREADS threads started after dbtap attached each add 1 N times to
# plain_counter, stats_ptr->counter (offset 8) and stats_ptr->small (offset 16, 4 bytes).

# run_expr NAME EXPR N THREADS [dbtap options]: one workload, one watch run, JSON in NAME.json.
run_expr() {
	local name=$1 expr=$2 n=$3 threads=$4
	shift 4
	watched_start "$name" "$n" "$threads" &&
	watch_start "$name.json" "$expr" -p "$(cat $name.pid)" -j "$@" &&
	watched_go "$name" &&
	watch_stop &&
	kill "$(cat $name.pid)"
}

test_expect_success 'SYMBOL: every write of every thread, attributed to the process' '
	run_expr a plain_counter 500 3 --by pid &&
	json_py "
pid = $(cat a.pid)
assert d[\"total\"] == 1500, d
assert d[\"processes\"] == [{\"pid\": pid, \"type\": \"watched\", \"user\": None, \"database\": None, \"writes\": 1500}], d
assert d[\"len\"] == 8 and d[\"value\"] == 1500 and d[\"value_start\"] == 0, d
" <a.json
'

test_expect_success '--events: every value in order, read in the kernel after the write' '
	run_expr b plain_counter 300 1 --events &&
	json_py "
ev = [l for l in lines if l[\"report\"] == \"event\"]
assert d[\"dropped\"] == 0 and d[\"events\"] == 300 and len(ev) == 300, (d, len(ev))
assert [e[\"value\"] for e in ev] == list(range(1, 301))
assert len({e[\"tid\"] for e in ev}) == 1 and ev[0][\"tid\"] != $(cat b.pid), ev[0]
" <b.json
'

# With two threads the value read after one write may already include the other
# thread's next one: only the counts are exact then.
test_expect_success '--events with two threads: one event per write, from both threads' '
	run_expr b2 plain_counter 300 2 --events &&
	json_py "
ev = [l for l in lines if l[\"report\"] == \"event\"]
assert d[\"dropped\"] == 0 and len(ev) == 600 and d[\"total\"] == 600, (d, len(ev))
assert len({e[\"tid\"] for e in ev}) == 2
assert max(e[\"value\"] for e in ev) == 600
" <b2.json
'

test_expect_success '--events with a small ring buffer: printed + dropped = every write' '
	run_expr b3 plain_counter 100000 1 --events --buffer 4 &&
	json_py "
ev = [l for l in lines if l[\"report\"] == \"event\"]
assert d[\"total\"] == 100000, d
assert d[\"dropped\"] > 0 and d[\"events\"] == len(ev), d
assert len(ev) + d[\"dropped\"] == 100000, (len(ev), d)
vals = [e[\"value\"] for e in ev]
assert vals == sorted(vals) and len(set(vals)) == len(vals)
" <b3.json
'

test_expect_success 'SYMBOL->FIELD from DWARF, with the length of the field' '
	run_expr c "stats_ptr->counter" 200 2 &&
	json_py "assert d[\"total\"] == 400 and d[\"len\"] == 8 and d[\"value\"] == 400, d" <c.json
'

test_expect_success 'SYMBOL->OFFSET:LEN and SYMBOL+OFFSET:LEN' '
	run_expr d "stats_ptr->16:4" 200 2 &&
	json_py "assert d[\"total\"] == 400 and d[\"len\"] == 4, d" <d.json &&
	run_expr e "stats+8:8" 150 1 &&
	json_py "assert d[\"total\"] == 150, d" <e.json
'

test_expect_success '0xADDRESS, and :1 on the low byte (its value wraps)' '
	watched_start f 300 1 &&
	dbtap watch plain_counter -p "$(cat f.pid)" --mode poll -d 0.1 -j >probe.json &&
	addr=$(json_py "print(d[\"address\"])" <probe.json) &&
	watch_start f.json "$addr:1" -p "$(cat f.pid)" -j &&
	watched_go f && watch_stop && kill "$(cat f.pid)" &&
	json_py "assert d[\"total\"] == 300 and d[\"len\"] == 1 and d[\"value\"] == 300 % 256, d" <f.json
'

test_expect_success ':x counts executions of a function' '
	run_expr g writer:x 10 3 &&
	json_py "assert d[\"total\"] == 3, d" <g.json
'

test_expect_success '-p PID: a process writing the same address is filtered out in the kernel' '
	watched_start h1 200 1 setarch -R &&
	watched_start h2 300 1 setarch -R &&
	watch_start h.json plain_counter -p "$(cat h1.pid)" -j &&
	dbtap watch plain_counter -p "$(cat h2.pid)" --mode poll -d 0.1 -i 0 -j >h2.json 2>/dev/null &&
	watched_go h1 && watched_go h2 &&
	watch_stop && kill "$(cat h1.pid)" "$(cat h2.pid)" &&
	json_py "
a2 = json.load(open(\"h2.json\"))[\"address\"]
assert d[\"address\"] == a2, (d[\"address\"], a2)   # the same virtual address in both
assert d[\"total\"] == 200 and d[\"ignored\"] == 300, d
assert [p[\"pid\"] for p in d[\"processes\"]] == [$(cat h1.pid)], d
" <h.json
'

test_expect_success '-p with two processes where the symbol is at different addresses: refused' '
	watched_start i1 1 1 &&
	watched_start i2 1 1 &&
	a=$(cat i1.pid) && b=$(cat i2.pid) &&
	test_expect_code 2 dbtap watch plain_counter -p "$a,$b" 2>err &&
	test_grep "^error: .plain_counter. is at 0x[0-9a-f]* in process $a but at 0x[0-9a-f]* in process $b" err
'

test_expect_success '--mode poll on a process that exits: its last increments counted, the end said' '
	watched_start e 10000 8 &&
	watch_start e.json plain_counter -p "$(cat e.pid)" -j --mode poll -i 0 &&
	watched_go e &&
	test_grep "^done 80000" e.out &&
	sleep 0.5 &&
	kill "$(cat e.pid)" &&
	watch_wait &&
	json_py "
# one summary, read only at the start and (the target gone) at the ticks before
assert [l[\"report\"] for l in lines] == [\"summary\"], lines
assert d[\"total\"] == 80000 and d[\"value\"] == 80000 and d[\"value_start\"] == 0, d
assert d[\"target_gone\"] is True, d
assert 0 < d[\"last_read_s\"] <= d[\"duration_s\"], d
" <e.json &&
	watched_start t 1000 2 &&
	watch_start tw.txt plain_counter -p "$(cat t.pid)" --mode poll -i 0 &&
	watched_go t &&
	sleep 0.3 &&
	kill "$(cat t.pid)" &&
	watch_wait &&
	test_grep "plain_counter: 2000 increments" tw.txt &&
	test_grep "^the target is gone: what it added after the last read, .* s into the run, is not counted" tw.txt
'

test_expect_success 'slots free after the expression runs' '
	slots_free
'

test_done
