/* Unit tests for serve's pure parts: Accept negotiation, --buckets, label values, --listen. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "bpf/loglinear.h"
#include "serve/accept.h"
#include "serve/buckets.h"
#include "serve/expo.h"
#include "serve/http.h"

static void test_accept(void **state)
{
	/* what Prometheus 2.x sends */
	assert_true(accept_wants_openmetrics("application/openmetrics-text;version=1.0.0,"
		"application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
		"*/*;q=0.1"));
	assert_true(accept_wants_openmetrics("application/openmetrics-text"));
	assert_true(accept_wants_openmetrics("text/plain;q=0.5, application/openmetrics-text ; q=0.9"));
	assert_false(accept_wants_openmetrics(NULL));
	assert_false(accept_wants_openmetrics(""));
	assert_false(accept_wants_openmetrics("*/*"));
	assert_false(accept_wants_openmetrics("text/plain;version=0.0.4"));
	assert_false(accept_wants_openmetrics("application/openmetrics-text;version=0.0.1"));
	assert_false(accept_wants_openmetrics("application/openmetrics-text;q=0"));
	assert_false(accept_wants_openmetrics("application/openmetrics-text;q=0.4,text/plain"));
	assert_false(accept_wants_openmetrics("application/openmetrics-text;q=garbage"));
	assert_false(accept_wants_openmetrics(";;;,,,==;q=;version"));
}

static void test_buckets(void **state)
{
	struct expo_buckets b;

	assert_int_equal(buckets_parse("0.001,0.01,0.1,1", &b), 0);
	assert_int_equal(b.n, 4);
	for (int i = 0; i < b.n; i++) {
		/* each bound is the lower edge of the bucket at index */
		assert_true(loglinear_lower(b.index[i]) == b.ns[i]);
		if (i)
			assert_true(b.ns[i] > b.ns[i - 1]);
	}
	/* within 1/64 of what was asked */
	assert_true(b.ns[0] > 1000000 * 63 / 64 && b.ns[0] < 1000000 * 65 / 64);
	assert_true(b.ns[3] > 1000000000ull * 63 / 64 && b.ns[3] < 1000000000ull * 65 / 64);
	assert_int_equal(buckets_parse(BUCKETS_DEFAULT, &b), 0);
	assert_int_equal(b.n, 16);
	assert_int_equal(buckets_parse("0.1,0.01", &b), -1);
	assert_int_equal(buckets_parse("0.1,0.1001", &b), -1); /* the same bucket edge */
	assert_int_equal(buckets_parse("", &b), -1);
	assert_int_equal(buckets_parse("0.1,", &b), -1);
	assert_int_equal(buckets_parse("x", &b), -1);
	assert_int_equal(buckets_parse("-1", &b), -1);
	assert_int_equal(buckets_parse("nan", &b), -1);
	assert_int_equal(buckets_parse("1e9", &b), -1);
}

static void test_clean_value(void **state)
{
	char out[16];

	expo_clean_value("select $1", out, sizeof(out));
	assert_string_equal(out, "select $1");
	expo_clean_value("a\tb\nc", out, sizeof(out));
	assert_string_equal(out, "a b c");
	expo_clean_value("x\xff\xc3(y", out, sizeof(out));
	assert_string_equal(out, "x?" "?(y");
	expo_clean_value("\xc3\xa9t\xc3\xa9", out, sizeof(out));
	assert_string_equal(out, "\xc3\xa9t\xc3\xa9");
	/* cut on a character boundary, never inside one */
	expo_clean_value("aaaaaaaaaaaaaa\xc3\xa9", out, sizeof(out));
	assert_string_equal(out, "aaaaaaaaaaaaaa");
	expo_clean_value("\xed\xa0\x80", out, sizeof(out)); /* a surrogate */
	assert_string_equal(out, "?" "?" "?");
}

static void test_expo_escape(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct expo e;
	struct expo_label l[] = { { "statement", "say \"hi\" \\ now" } };

	expo_init(&e, &sb, false);
	expo_family(&e, "dbtap_x", EXPO_COUNTER, NULL, "a\nb");
	expo_u64(&e, l, 1, 7);
	assert_string_equal(sb.buf, "# HELP dbtap_x_total a\\nb\n# TYPE dbtap_x_total counter\n"
			    "dbtap_x_total{statement=\"say \\\"hi\\\" \\\\ now\"} 7\n");
	strbuf_release(&sb);
}

static void test_listen(void **state)
{
	char h[64], p[8];

	assert_int_equal(http_split_listen("127.0.0.1:9187", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_string_equal(p, "9187");
	assert_int_equal(http_split_listen("[::1]:0", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(http_split_listen(":9187", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "");
	assert_int_equal(http_split_listen("nowhere", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(http_split_listen("::1:80", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(http_split_listen("h:99999", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(http_split_listen("h:", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(http_split_listen("h:8x", h, sizeof(h), p, sizeof(p)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_clean_value),
		cmocka_unit_test(test_expo_escape),
		cmocka_unit_test(test_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
