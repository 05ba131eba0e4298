/* Unit tests for target/demangle.c: C++ names as perf prints them, bounds on untrusted names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/demangle.h"

/* What c++filt -p (no parameters: perf's default form) prints for name. */
static void cxxfilt(const char *name, char *out, size_t len)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "c++filt -p '%s'", name);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, (int)len, f));
	out[strcspn(out, "\n")] = '\0';
	pclose(f);
}

static void test_as_cxxfilt(void **state)
{
	/* namespaces, a class template's member, a function template, const, a
	 * constructor, an anonymous namespace, a lambda, operator delete, a pack */
	static const char *const names[] = {
		"_ZN8dbtap_wl5inner4workEi", "_ZN8dbtap_wl5inner3AccIlE4spinEl",
		"_ZN8dbtap_wl5twiceIjEET_S1_", "_ZNK3foo3barEv", "_ZN5Outer5InnerC2Ev",
		"_ZN12_GLOBAL__N_14workEv", "_ZZN1a1bEvENKUlT_E_clIiEEDaS0_", "_ZdlPv",
		"_Z1fIJiEEvDpT_", "_ZN10JavaThread17thread_main_innerEv",
	};
	char want[512], got[DEMANGLE_OUT_MAX + 1];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cxxfilt(names[i], want, sizeof(want));
		assert_true(demangle(names[i], got, sizeof(got)));
		assert_string_equal(got, want);
	}
}

static void test_std_abbreviations(void **state)
{
	char got[DEMANGLE_OUT_MAX + 1];

	/* perf's form; c++filt spells std::basic_string<char, ...> out (its DMGL_VERBOSE) */
	assert_true(demangle("_ZNSs4sizeEv", got, sizeof(got)));
	assert_string_equal(got, "std::string::size");
}

static void test_not_mangled_or_bad(void **state)
{
	char got[DEMANGLE_OUT_MAX + 1] = "keep";

	assert_false(demangle("main", got, sizeof(got)));
	assert_false(demangle("_GLOBAL__sub_I_main", got, sizeof(got)));
	assert_false(demangle("_Z", got, sizeof(got)));
	assert_false(demangle("_ZN3foo", got, sizeof(got)));
	assert_string_equal(got, "keep");
	/* without parameters the demangler stops after the name, as perf's does */
	assert_true(demangle("_ZN3foo3barEv\nx", got, sizeof(got)));
	assert_string_equal(got, "foo::bar");
}

static void test_bounds(void **state)
{
	char small[8] = "keep", got[DEMANGLE_OUT_MAX + 1];
	char *lng = malloc(DEMANGLE_IN_MAX + 64);
	size_t n = 0;

	assert_non_null(lng);
	/* a result that does not fit leaves the buffer alone */
	assert_false(demangle("_ZN8dbtap_wl5inner4workEi", small, sizeof(small)));
	assert_string_equal(small, "keep");
	/* _ZN + "3abc" repeated past the input bound + E v: a valid name, too long */
	n += (size_t)sprintf(lng, "_ZN");
	while (n < DEMANGLE_IN_MAX)
		n += (size_t)sprintf(lng + n, "3abc");
	sprintf(lng + n, "Ev");
	assert_false(demangle(lng, got, sizeof(got)));
	/* the same within the input bound, its result over the output bound */
	lng[DEMANGLE_IN_MAX - 8] = '\0';
	n = strlen(lng);
	while ((n - 3) % 4)
		lng[--n] = '\0';
	strcat(lng, "Ev");
	assert_false(demangle(lng, got, sizeof(got)));
	/* and a short one of the same shape fits */
	assert_true(demangle("_ZN3abc3abcEv", got, sizeof(got)));
	assert_string_equal(got, "abc::abc");
	free(lng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_cxxfilt),
		cmocka_unit_test(test_std_abbreviations),
		cmocka_unit_test(test_not_mangled_or_bad),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
