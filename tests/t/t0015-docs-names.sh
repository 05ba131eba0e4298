#!/bin/bash
# t0015: the docs name real code: a function a page writes as `name()` exists.
test_description='every function the docs name as `name()` is defined or called in the source'
. "$(dirname "$0")"/../lib/test-lib.sh

# docs_names FILE...: "FILE: NAME" for each `NAME()` a page writes that no file under
# src/ or tests/ has as a word (renamed functions, like target_opt once; SQL functions
# the docs name are in the tests that call them).
docs_names() {
	local f w
	for f in "$@"; do
		grep -o '`[A-Za-z_][A-Za-z0-9_]*()`' "$f" | tr -d '`()' | sort -u |
		while read -r w; do
			grep -rqw --exclude-dir="trash.*" --exclude=t0015-docs-names.sh -- "$w" \
				"$TEST_ROOT/src" "$TEST_ROOT/tests" ||
				echo "${f#$TEST_ROOT/}: $w"
		done
	done
}

test_expect_success 'the checker finds a name that is nowhere in the source' '
	mkdir -p fake/docs &&
	printf "%s\n" "calls \`target_label()\` and \`dbtap_no_such_function_t0015()\`" >fake/docs/x.md &&
	docs_names fake/docs/x.md >missing &&
	grep -qx "fake/docs/x.md: dbtap_no_such_function_t0015" missing &&
	! grep -q target_label missing
'

test_expect_success 'docs/*.md and README.md name no function the source does not have' '
	docs_names "$TEST_ROOT"/docs/*.md "$TEST_ROOT"/README.md >missing &&
	test_must_be_empty missing
'

test_done
