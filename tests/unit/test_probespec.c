/* Unit tests for target/probespec.c: spec syntax, resolution against this test binary. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/probespec.h"
#include "util/error.h"

volatile int probespec_target_var;

__attribute__((noinline, used)) void probespec_target_one(void)
{
	probespec_target_var++;
}

__attribute__((noinline, used)) void probespec_target_two(void)
{
	probespec_target_var += 2;
}

static char self[PATH_MAX];

static void test_parse(void **state)
{
	struct probespec p;

	assert_int_equal(probespec_parse("usdt:postgresql:transaction__start", &p), 0);
	assert_int_equal(p.kind, PROBE_USDT);
	assert_null(p.binary);
	assert_string_equal(p.provider, "postgresql");
	assert_string_equal(p.name, "transaction__start");
	probespec_free(&p);

	assert_int_equal(probespec_parse("usdt:/usr/bin/x:prov:na*", &p), 0);
	assert_string_equal(p.binary, "/usr/bin/x");
	assert_string_equal(p.provider, "prov");
	assert_true(probespec_has_wildcard(&p));
	probespec_free(&p);

	/* bpftrace's usdt:/path:NAME: a path where the provider would be */
	assert_int_equal(probespec_parse("usdt:/usr/lib/postgresql/15/bin/postgres:query__start", &p), 0);
	assert_string_equal(p.binary, "/usr/lib/postgresql/15/bin/postgres");
	assert_true(p.any_provider);
	assert_string_equal(p.name, "query__start");
	assert_false(probespec_has_wildcard(&p));
	probespec_free(&p);
	/* no '/': PROVIDER:NAME as before */
	assert_int_equal(probespec_parse("usdt:postgres:query__start", &p), 0);
	assert_null(p.binary);
	assert_false(p.any_provider);
	assert_string_equal(p.provider, "postgres");
	probespec_free(&p);

	assert_int_equal(probespec_parse("uretprobe:postgres:bms_is_member", &p), 0);
	assert_int_equal(p.kind, PROBE_URETPROBE);
	assert_string_equal(p.binary, "postgres");
	assert_string_equal(p.name, "bms_is_member");
	assert_false(probespec_has_wildcard(&p));
	probespec_free(&p);

	assert_int_equal(probespec_parse("uprobe:func", &p), 0);
	assert_null(p.binary);
	assert_string_equal(p.name, "func");
	probespec_free(&p);

	assert_int_equal(probespec_parse("kprobe:x", &p), EXIT_USAGE);
	assert_int_equal(probespec_parse("usdt:x", &p), EXIT_USAGE);
	assert_int_equal(probespec_parse("uprobe::f", &p), EXIT_USAGE);
	assert_int_equal(probespec_parse("uprobe:a:b:c", &p), EXIT_USAGE);
	assert_int_equal(probespec_parse("", &p), EXIT_USAGE);
}

static int resolve(const char *text, int max, struct probe_list *l)
{
	struct probespec p;
	int rc = probespec_parse(text, &p);

	if (!rc)
		rc = probespec_resolve(&p, self, max, l);
	probespec_free(&p);
	return rc;
}

static void test_resolve(void **state)
{
	struct probe_list l = { 0 };
	char spec[PATH_MAX + 64];

	snprintf(spec, sizeof(spec), "uprobe:%s:probespec_target_one", self);
	assert_int_equal(resolve(spec, 64, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.p[0].name, "probespec_target_one");
	assert_string_equal(l.p[0].binary, self);
	assert_true(l.p[0].offset > 0);
	probe_list_free(&l);

	/* The target's binary when the spec names none. */
	assert_int_equal(resolve("uretprobe:probespec_target_two", 64, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.p[0].kind, PROBE_URETPROBE);
	probe_list_free(&l);

	snprintf(spec, sizeof(spec), "uprobe:%s:probespec_target_*", self);
	assert_int_equal(resolve(spec, 64, &l), 0);
	assert_int_equal(l.n, 2);
	assert_true(l.p[0].offset != l.p[1].offset);
	probe_list_free(&l);
	/* Over the cap: refused, nothing kept. */
	assert_int_equal(resolve(spec, 1, &l), EXIT_USAGE);
	probe_list_free(&l);

	assert_int_equal(resolve("uprobe:probespec_target_three", 64, &l), EXIT_USAGE);
	assert_int_equal(resolve("uprobe:probespec_target_var", 64, &l), EXIT_USAGE);
	/* This binary has no USDT notes. */
	assert_int_equal(resolve("usdt:prov:name", 64, &l), EXIT_USAGE);
	assert_int_equal(resolve("uprobe:/no/such/file:f", 64, &l), EXIT_USAGE);
	assert_int_equal(l.n, 0);
	assert_string_equal(probe_kind_name(PROBE_USDT), "usdt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_resolve),
	};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
