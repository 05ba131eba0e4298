#!/bin/bash
# t0010: the build: what the binary exports, and the Makefile's variables.
test_description='dbtap exports no function of its own; make honours ARCH, CPPFLAGS, LDFLAGS'
. "$(dirname "$0")"/../lib/test-lib.sh

command -v nm >/dev/null || test_skip_all "nm not found (binutils)"

# A library calling a function by a name dbtap also defines (libdw calls libc's error()
# when it runs out of memory) would bind to dbtap's if dbtap exported it.
test_expect_success 'nm -D lists no symbol defined by dbtap (only libc copy relocations)' '
	nm -D --defined-only "$DBTAP" >syms &&
	{ grep -v "@" syms >own || true; } &&
	test ! -s own &&
	! grep -w error syms
'

test_expect_success 'the symbol table still names the self-test probe site (doctor uprobes it)' '
	nm "$DBTAP" >all &&
	test_grep " dbtap_probe_nop5$" all &&
	test_grep " dbtap_probe_semaphore$" all
'

test_expect_success 'make takes CPPFLAGS and LDFLAGS from the environment' '
	CPPFLAGS=-DDBTAP_T0010_CPP LDFLAGS=-Wl,-zdbtap_t0010 \
		make -s -n -B -C "$TEST_ROOT" dbtap >plan &&
	grep -- "-DDBTAP_T0010_CPP" plan | grep -q -- "-c src/util/error.c" &&
	grep -- "-Wl,-zdbtap_t0010" plan | grep -q -- "-o dbtap"
'

test_expect_success 'ARCH can be set from the environment (BPF target arch)' '
	ARCH=arm64 make -s -n -B -C "$TEST_ROOT" build/bpf/tps.bpf.o >plan &&
	test_grep "-D__TARGET_ARCH_arm64" plan &&
	make -s -n -B -C "$TEST_ROOT" build/bpf/tps.bpf.o >plan2 &&
	test_grep "-D__TARGET_ARCH_$(uname -m | sed "s/x86_64/x86/;s/aarch64/arm64/") " plan2
'

test_expect_success 'the libraries are found through pkg-config' '
	make -s -n -B -C "$TEST_ROOT" dbtap >plan &&
	for l in $(pkg-config --libs libbpf libelf libdw zlib); do
		grep -- "-o dbtap" plan | grep -q -- "$l" || return 1
	done
'

test_expect_success 'libpfm4 is not linked in (stat loads it), nor an HTTP library (serve has its own)' '
	readelf -d "$DBTAP" >dyn &&
	test_grep "NEEDED.*libbpf" dyn &&
	! grep -q "NEEDED.*libpfm" dyn &&
	! grep -q "NEEDED.*libmicrohttpd" dyn
'

test_done
