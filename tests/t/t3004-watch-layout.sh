#!/bin/bash
test_description='dbtap watch xid/oid: the PostgreSQL 15 layout equals offsetof() on the real server headers'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

major=$("$PG_BINDIR"/postgres --version | sed -n 's/.* \([0-9][0-9]*\)\.[0-9]*.*/\1/p')
pg_server_headers

test_expect_success "offsetof() on the PostgreSQL $major headers" '
	cat >layout.c <<-\EOC &&
	#include "postgres.h"
	#include "access/transam.h"
	#include <stddef.h>
	#include <stdio.h>
	#undef printf
	#if PG_VERSION_NUM >= 170000
	#define PTR TransamVariables
	#define T TransamVariablesData
	#else
	#define PTR ShmemVariableCache
	#define T VariableCacheData
	#endif
	#if PG_VERSION_NUM >= 140000
	#define XID nextXid
	#else
	#define XID nextFullXid
	#endif
	#define S(x) #x
	#define STR(x) S(x)
	int main(void)
	{
		/* the global is a pointer to the struct (sizeof does not evaluate it) */
		printf("%s %s %zu\n", STR(PTR), STR(T), sizeof(*PTR));
		printf("oidCount %zu:%zu\n", offsetof(T, oidCount), sizeof(((T *)0)->oidCount));
		printf("xid %s->%zu:%zu %s\n", STR(PTR), offsetof(T, XID), sizeof(((T *)0)->XID), STR(XID));
		printf("oid %s->%zu:%zu nextOid\n", STR(PTR), offsetof(T, nextOid), sizeof(((T *)0)->nextOid));
		return 0;
	}
	EOC
	cc -I"$server_inc" -o layout layout.c &&
	./layout >expected &&
	cat expected
'

test_expect_success 'dbtap watches exactly those bytes, on a running server' '
	pg_start pg &&
	for w in xid oid; do
		dbtap watch $w --pg="$PGDATA" --mode poll -d 0.1 -i 0 -j >$w.json 2>$w.err || return 1
		echo "$w $(json_py "print(d[\"expr\"])" <$w.json) $(sed -n "s/.*($w\|.*, \([a-zA-Z]*\) = .*/\1/p" $w.err)"
	done >actual &&
	grep "^[xo]id " expected >expected.fields &&
	test_cmp expected.fields actual
'

test_expect_success "dbtap's layout table row for $major equals offsetof()" '
	dbtap watch --layouts -j >layouts.json &&
	json_py "
exp = {}
for l in open(\"expected\"):
    w = l.split()
    exp[w[0]] = w[1:]
row = [r for r in lines if r[\"major_min\"] <= $major <= r[\"major_max\"]]
assert len(row) == 1, lines
r = row[0]
sym = [k for k in exp if k not in (\"xid\", \"oid\", \"oidCount\")][0]
assert r[\"symbol\"] == sym and r[\"struct\"] == exp[sym][0] and r[\"size\"] == int(exp[sym][1]), (r, exp)
assert \"%s->%d:%d\" % (sym, r[\"xid_offset\"], r[\"xid_size\"]) == exp[\"xid\"][0], (r, exp)
assert r[\"xid_field\"] == exp[\"xid\"][1], (r, exp)
assert \"%s->%d:%d\" % (sym, r[\"nextOid_offset\"], r[\"nextOid_size\"]) == exp[\"oid\"][0], (r, exp)
assert \"%d:%d\" % (r[\"oidCount_offset\"], r[\"oidCount_size\"]) == exp[\"oidCount\"][0], (r, exp)
" <layouts.json
'

test_done
