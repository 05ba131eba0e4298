/* Unit tests for serve/httpreq.c: the heads scrapers send, and the ones refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "serve/httpreq.h"

static struct httpreq r;

static long parse(const char *s)
{
	return httpreq_parse(s, strlen(s), &r);
}

static void assert_path(const char *s, const char *path)
{
	assert_int_equal(r.path_len, strlen(path));
	assert_memory_equal(s + r.path_off, path, r.path_len);
}

static void test_scrapes(void **state)
{
	const char *prom = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9187\r\n"
			   "User-Agent: Prometheus/2.42.0\r\n"
			   "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n"
			   "Accept-Encoding: gzip\r\n\r\n";
	assert_int_equal(parse(prom), (long)strlen(prom));
	assert_int_equal(r.method, HTTPREQ_GET);
	assert_int_equal(r.minor, 1);
	assert_true(r.keep_alive);
	assert_false(r.has_body);
	assert_path(prom, "/metrics");
	assert_true(r.has_accept);
	assert_string_equal(r.accept, "application/openmetrics-text;version=1.0.0,text/plain;q=0.5");

	/* the query is not part of the path; two Accept fields are one list */
	const char *q = "HEAD /?x=1 HTTP/1.1\nhost: a\nACCEPT:  text/plain \nAccept:*/*\n\n";
	assert_int_equal(parse(q), (long)strlen(q));
	assert_int_equal(r.method, HTTPREQ_HEAD);
	assert_path(q, "/");
	assert_string_equal(r.accept, "text/plain, */*");

	/* absolute-form: the path after the authority */
	const char *a = "GET http://h:9187/metrics HTTP/1.1\r\nHost: h:9187\r\n\r\n";
	assert_int_equal(parse(a), (long)strlen(a));
	assert_path(a, "/metrics");
	assert_false(r.has_accept);
	assert_string_equal(r.accept, "");
}

static void test_connection(void **state)
{
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n") > 0);
	assert_false(r.keep_alive);
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n") > 0);
	assert_false(r.keep_alive);
	assert_true(parse("GET / HTTP/1.0\r\n\r\n") > 0);
	assert_int_equal(r.minor, 0);
	assert_false(r.keep_alive);
	assert_true(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") > 0);
	assert_true(r.keep_alive);
	/* a later 1.x is answered as 1.1 */
	assert_true(parse("GET / HTTP/1.7\r\nHost: a\r\n\r\n") > 0);
	assert_int_equal(r.minor, 1);
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") > 0);
	assert_false(r.has_body);
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc") > 0);
	assert_true(r.has_body);
}

static void test_pipelined(void **state)
{
	const char *two = "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n\r\n";
	long n = parse(two);

	/* the empty line before the request line is skipped; the next request is not read */
	assert_int_equal(n, (long)(strstr(two, "\r\n\r\n") - two) + 4);
	assert_path(two, "/");
	assert_int_equal(httpreq_parse(two + n, strlen(two + n), &r), (long)strlen(two + n));
	assert_path(two + n, "/metrics");
}

static void test_incomplete(void **state)
{
	const char *full = "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n";

	for (size_t i = 0; i < strlen(full); i++)
		assert_int_equal(httpreq_parse(full, i, &r), 0);
	assert_int_equal(parse("GET /met"), 0);
	assert_int_equal(parse(""), 0);
}

static void test_refused(void **state)
{
	assert_int_equal(parse("\x01\xff\x13garbage\x7f\r\n\r\n"), -400);
	assert_int_equal(parse("GET\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics\r\n\r\n"), -400);
	assert_int_equal(parse("GET  /metrics HTTP/1.1\r\nHost: a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1 \r\nHost: a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1x\r\nHost: a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics http/1.1\r\nHost: a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/9.9\r\nHost: t\r\n\r\n"), -505);
	assert_int_equal(parse("GET /metrics HTTP/2.0\r\nHost: t\r\n\r\n"), -505);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\n: a\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n"), -400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n"), -400);
	/* no Host in HTTP/1.1, or two */
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\n\r\n"), -400);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), -400);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n"), -400);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
			       "Content-Length: 2\r\n\r\n"), -400);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999999999999999\r\n\r\n"),
			 -400);
	assert_int_equal(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"), -501);

	const char nul[] = "GET /met\0rics HTTP/1.1\r\nHost: t\r\n\r\n";
	assert_int_equal(httpreq_parse(nul, sizeof(nul) - 1, &r), -400);
}

static void test_size_bound(void **state)
{
	size_t n = HTTPREQ_HEAD_MAX + 100;
	char *big = malloc(n);
	const char *start = "GET /metrics HTTP/1.1\r\nHost: t\r\nX-Big: ";

	assert_non_null(big);
	memset(big, 'a', n);
	memcpy(big, start, strlen(start));
	assert_int_equal(httpreq_parse(big, HTTPREQ_HEAD_MAX - 1, &r), 0);
	assert_int_equal(httpreq_parse(big, HTTPREQ_HEAD_MAX, &r), -431);
	assert_int_equal(httpreq_parse(big, n, &r), -431);
	/* a head of exactly the bound is taken */
	memcpy(big + HTTPREQ_HEAD_MAX - 4, "\r\n\r\n", 4);
	assert_int_equal(httpreq_parse(big, n, &r), HTTPREQ_HEAD_MAX);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrapes),
		cmocka_unit_test(test_connection),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_size_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
