/* Unit tests for report/xml.c: what the SVG writers put between quotes and tags. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/xml.h"

static void expect_escaped(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	xml_escape(f, in);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_markup(void **state)
{
	(void)state;
	expect_escaped("a<b>&\"c\"'d'", "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
	expect_escaped("", "");
	/* UTF-8 passes as it is */
	expect_escaped("caf\xc3\xa9", "caf\xc3\xa9");
}

/* A statement's newline or a title's control byte: a space, never a byte XML refuses. */
static void test_control_bytes(void **state)
{
	(void)state;
	expect_escaped("select\n1\tfrom\rx", "select 1 from x");
	expect_escaped("\x01\x1f" "a\x7f", "  a\x7f");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markup),
		cmocka_unit_test(test_control_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
