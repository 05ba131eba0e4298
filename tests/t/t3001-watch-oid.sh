#!/bin/bash
test_description='dbtap watch oid: OIDs consumed, by the backend that consumed them'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh
. "$TEST_LIB"/watch.sh

# catalog_oids AGG ABOVE: AGG (count, min, max) of the OIDs above ABOVE in every
# pg_catalog table with an oid column: what a run consumed, as the database records it.
catalog_oids() {
	local outer=$1
	[ "$1" = count ] && outer=sum
	pg_sql "select coalesce($outer((xpath('/row/n/text()', query_to_xml(format(
		'select $1(oid)::bigint as n from %s where oid > $2', c.oid::regclass), false, true,
		'')))[1]::text::bigint), 0)
	from pg_class c
	where c.relnamespace = 'pg_catalog'::regnamespace and c.relkind = 'r'
	  and exists (select 1 from pg_attribute a
	              where a.attrelid = c.oid and a.attname = 'oid' and a.attnum > 0)"
}

test_expect_success 'set up a fresh cluster' '
	pg_start pg "autovacuum = off"
'

# On a new cluster nextOid starts below FirstNormalObjectId (16384): the first OID
# handed out after start-up resets it to 16384 first, one write more than OIDs used.
test_expect_success 'first OIDs after start-up: one reset write plus one per OID, in one backend' '
	next_oid=$(pg_sql "select next_oid from pg_control_checkpoint()") &&
	watch_start o1.json oid --pg="$PGDATA" -j --by pid -i 0 &&
	printf "select pg_backend_pid();\ncreate table a1 (x int);\ncreate table a2 (x int);\n" |
		psql -XAtq -v ON_ERROR_STOP=1 -f - >pid1 &&
	watch_stop &&
	consumed=$(catalog_oids count 16383) &&
	first=$(catalog_oids min 16383) &&
	json_py "
pid, consumed, next_oid = $(cat pid1), $consumed, $next_oid
reset = 1 if next_oid < 16384 else 0
assert consumed >= 6, consumed   # two tables: pg_class and two pg_type rows each
assert reset == 0 or $first == 16384
s = d
assert s[\"total\"] == consumed + reset, (s, consumed, reset)
assert s[\"processes\"] == [{\"pid\": pid, \"type\": \"client backend\", \"user\": \"postgres\", \"database\": \"postgres\", \"writes\": consumed + reset}], s
" <o1.json
'

test_expect_success 'later OIDs: writes equal the catalog rows created (tables, index, sequence, toast)' '
	before=$(catalog_oids max 0) &&
	watch_start o2.json oid --pg="$PGDATA" -j --by pid -i 0.2 &&
	printf "%s\n" "select pg_backend_pid();" \
		"create table b1 (x int);" \
		"create table b2 (id serial primary key, t text default now()::text);" \
		"create view b3 as select * from b1;" |
		psql -XAtq -v ON_ERROR_STOP=1 -f - >pid2 &&
	watch_stop &&
	consumed=$(catalog_oids count "$before") &&
	json_py "
pid, consumed = $(cat pid2), $consumed
s = d
assert consumed >= 10, consumed
assert s[\"total\"] == consumed, (s, consumed)
assert s[\"processes\"] == [{\"pid\": pid, \"type\": \"client backend\", \"user\": \"postgres\", \"database\": \"postgres\", \"writes\": consumed}], s
# each write moved nextOid by one
assert s[\"value\"] - s[\"value_start\"] == consumed, s
" <o2.json
'

test_expect_success '--by type sums writers by backend type' '
	watch_start o3.json oid --pg="$PGDATA" -j --by type -i 0 &&
	pg_sql "create table c1 (x int)" && pg_sql "create table c2 (x int)" &&
	watch_stop &&
	json_py "
s = d
assert s[\"types\"] == [{\"type\": \"client backend\", \"writes\": 6}], s
assert len(s[\"processes\"]) == 2 and s[\"total\"] == 6, s
" <o3.json
'

test_expect_success 'slots free after the oid runs' '
	slots_free
'

test_done
