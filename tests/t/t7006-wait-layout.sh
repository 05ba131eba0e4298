#!/bin/bash
test_description='dbtap wait and latency query: the PgBackendStatus layout and BackendState values they read equal offsetof() on the real server headers'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/pg.sh

major=$("$PG_BINDIR"/postgres --version | sed -n 's/.* \([0-9][0-9]*\)\.[0-9]*.*/\1/p')
pg_server_headers

test_expect_success "offsetof() and the BackendState values on the PostgreSQL $major headers" '
	cat >layout.c <<-\EOC &&
	#include "postgres.h"
	#include "tcop/tcopprot.h"
	#if PG_VERSION_NUM >= 140000
	#include "utils/backend_status.h"
	#else
	#include "pgstat.h"
	#endif
	#include <stddef.h>
	#include <stdio.h>
	#undef printf
	int main(void)
	{
		/* the global is a pointer to the row (sizeof does not evaluate it) */
		printf("statements and transactions: *MyBEEntry st_state +%zu,"
		       " st_activity_start_timestamp +%zu, st_activity_raw +%zu (layout table);"
		       " BackendState idle %d running %d idle_in_transaction %d fastpath %d"
		       " idle_in_transaction_aborted %d disabled %d\n",
		       offsetof(PgBackendStatus, st_state),
		       offsetof(PgBackendStatus, st_activity_start_timestamp),
		       offsetof(PgBackendStatus, st_activity_raw), (int)STATE_IDLE,
		       (int)STATE_RUNNING, (int)STATE_IDLEINTRANSACTION, (int)STATE_FASTPATH,
		       (int)STATE_IDLEINTRANSACTION_ABORTED, (int)STATE_DISABLED);
		printf("statements: *MyBEEntry st_changecount +%zu, st_procpid +%zu,"
		       " st_xact_start_timestamp +%zu, st_activity_start_timestamp +%zu,"
		       " st_state_start_timestamp +%zu, st_proc_start_timestamp +%zu,"
		       " st_state +%zu, st_activity_raw +%zu (layout table)\n",
		       offsetof(PgBackendStatus, st_changecount),
		       offsetof(PgBackendStatus, st_procpid),
		       offsetof(PgBackendStatus, st_xact_start_timestamp),
		       offsetof(PgBackendStatus, st_activity_start_timestamp),
		       offsetof(PgBackendStatus, st_state_start_timestamp),
		       offsetof(PgBackendStatus, st_proc_start_timestamp),
		       offsetof(PgBackendStatus, st_state),
		       offsetof(PgBackendStatus, st_activity_raw));
		printf("head sizes %zu %zu %zu %zu %zu\n", sizeof(MyBEEntry->st_changecount),
		       sizeof(MyBEEntry->st_procpid), sizeof(MyBEEntry->st_xact_start_timestamp),
		       sizeof(MyBEEntry->st_state_start_timestamp),
		       sizeof(MyBEEntry->st_proc_start_timestamp));
		printf("sizes %zu %zu %zu %zu\n", sizeof(MyBEEntry->st_state),
		       sizeof(MyBEEntry->st_activity_start_timestamp),
		       sizeof(MyBEEntry->st_activity_raw), sizeof(debug_query_string));
		return 0;
	}
	EOC
	cc -I"$server_inc" -o layout layout.c &&
	./layout >expected &&
	cat expected &&
	# the sizes the program reads
	test "$(sed -n "s/^sizes //p" expected)" = "4 8 8 8" &&
	test "$(sed -n "s/^head sizes //p" expected)" = "4 4 8 8 8"
'

# The timestamps read from a row are TimestampTz, microseconds since PostgreSQL's
# epoch: the headers derive it from two Julian day numbers, dbtap states it in seconds.
test_expect_success "the TimestampTz epoch in src/pg equals the PostgreSQL $major headers' own" '
	cat >epoch.c <<-\EOC &&
	#include "postgres.h"
	#include "datatype/timestamp.h"
	#include "pg/layout.h"
	#undef printf
	#include <stdio.h>
	int main(void)
	{
		printf("%lld %lld\n",
		       (long long)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY,
		       (long long)PG_EPOCH_UNIX_S);
		return 0;
	}
	EOC
	cc -I"$server_inc" -I"$TEST_ROOT/src" -o epoch epoch.c &&
	./epoch >epoch.out &&
	read headers ours <epoch.out &&
	test "$headers" -gt 0 &&
	test "$headers" = "$ours"
'

test_expect_success 'dbtap wait reads exactly those, on a running server' '
	pg_start pg &&
	dbtap wait -v --pg="$PGDATA" -d 0.1 -j >w.json 2>w.err &&
	sed -n "s/^dbtap: \(statements and transactions: .*\)/\1/p" w.err >actual &&
	case $major in
	15 | 16)
		grep "^statements and transactions" expected >expected.row &&
		test_grep "statements from PgBackendStatus" w.err ;;
	*)	# a version whose layout dbtap has not checked: the probes, and why
		echo "statements and transactions: USDT probes (the PgBackendStatus layout of PostgreSQL $major is not checked)" >expected.row ;;
	esac &&
	test_cmp expected.row actual
'

test_expect_success 'dbtap latency query reads exactly those, or says why it takes the probes' '
	dbtap latency -v --pg="$PGDATA" -d 0.1 -j query >l.json 2>l.err &&
	sed -n "s/^dbtap: \(statements: .*\)/\1/p" l.err >actual &&
	case $major in
	15 | 16)
		grep "^statements: " expected >expected.row &&
		json_py "assert d[\"statements_from\"] == \"pg_backend_status\", d" <l.json ;;
	*)	echo "statements: USDT probes (the PgBackendStatus layout of PostgreSQL $major is not checked)" >expected.row &&
		json_py "assert d[\"statements_from\"] == \"usdt\", d" <l.json ;;
	esac &&
	test_cmp expected.row actual
'

test_done
