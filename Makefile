# dbtap: build, test, install. libbpf-tools style: *.bpf.c -> .bpf.o -> .skel.h -> dbtap.
# `make deps` installs the Debian packages the build and the tests need.

PREFIX     ?= /usr/local
DESTDIR    ?=
VERSION    := 0.1.0
BUILD      := build
# SANITIZE=1: dbtap and the unit tests built with AddressSanitizer, UndefinedBehavior-
# Sanitizer and LeakSanitizer in a build directory of their own; `make check SANITIZE=1`
# runs the unit tests and SAN_TAP with them. The workloads stay plain, in build/.
ifeq ($(SANITIZE),1)
BUILD      := build/san
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
DBTAP_BIN  := $(BUILD)/dbtap
# a sanitizer's finding exits 86, told apart from dbtap's own 1 and 2
export ASAN_OPTIONS := detect_leaks=1:exitcode=86:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1:exitcode=86
export LSAN_OPTIONS := exitcode=86
else
DBTAP_BIN  := dbtap
endif
WL_DIR     := build/workloads
CC         ?= gcc
CXX        ?= g++
CLANG      ?= clang
BPFTOOL    ?= bpftool
LLVM_STRIP ?= llvm-strip
PKG_CONFIG ?= pkg-config
ARCH       ?= $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

# The libraries' flags come from pkg-config where they ship a .pc file (libpfm4: its header only).
# libpfm4 is only compiled against: the commands that use it load it (util/dynlib.c),
# so the others start without its relocations.
PKGS       := libbpf libelf libdw zlib
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(or $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null),-lbpf -lelf -ldw -lz)
CMOCKA_LIBS := $(or $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null),-lcmocka)

CFLAGS     ?= -O2 -g
# -fvisibility=hidden: dbtap exports no function of its own, so a library's call to a
# libc function dbtap also names (libdw's error() on out-of-memory) binds to libc's.
CFLAGS     += $(SAN_FLAGS) -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror \
              -std=gnu11 -fvisibility=hidden
# CPPFLAGS, CFLAGS and LDFLAGS from the command line or the environment are honoured.
DBTAP_CPPFLAGS := -D_GNU_SOURCE -DDBTAP_VERSION='"$(VERSION)"' -Isrc -I$(BUILD) $(PKG_CFLAGS) \
              $(CPPFLAGS)
# libiberty (a static archive): the C++ demangler c++filt and perf use, linked in whole
LDLIBS     := $(PKG_LIBS) -liberty -lm -lpthread
BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Isrc \
              -I/usr/include/$(shell uname -m)-linux-gnu

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS  := $(wildcard src/bpf/*.bpf.c)
BPF_OBJS  := $(patsubst src/bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst src/bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
APP_SRCS  := $(filter-out src/bpf/%.bpf.c,$(wildcard src/*.c src/*/*.c))
APP_ASMS  := $(wildcard src/*/*.S)
APP_OBJS  := $(patsubst src/%.c,$(BUILD)/%.o,$(APP_SRCS)) $(patsubst src/%.S,$(BUILD)/%.o,$(APP_ASMS))
LIB_OBJS  := $(filter-out $(BUILD)/main.o,$(APP_OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c tests/workloads/*.S tests/workloads/*.cpp)
WORKLOADS := $(sort $(patsubst tests/workloads/%,$(WL_DIR)/%,$(basename $(WORKLOAD_SRCS))))
# The JVM target, where a JDK is installed (make deps installs one)
JAVAC     ?= $(shell command -v javac 2>/dev/null)
ifneq ($(JAVAC),)
WORKLOADS += $(patsubst tests/workloads/%.java,$(WL_DIR)/%.class,$(wildcard tests/workloads/*.java))
endif

DEB_PACKAGES := clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev libpfm4-dev \
                libcmocka-dev systemtap-sdt-dev pkg-config postgresql postgresql-contrib \
                bpftrace perl procps python3 gcc make binutils iproute2 libclang-rt-14-dev \
                prometheus curl chromium openjdk-17-jdk-headless libiberty-dev \
                g++
# From bookworm-backports on Debian 12: libbpf 1.4 (multi-uprobe links, USDT through them).
BACKPORTS    := libbpf-dev libbpf1

.PHONY: all deps check unit-test tap-test demo install clean workloads
.DELETE_ON_ERROR:
# Skeletons and BPF objects are made by pattern rules only: keep them between builds.
.SECONDARY: $(SKELS) $(BPF_OBJS) $(BUILD)/min_core.btf

all: $(DBTAP_BIN) workloads

deps:
	@tools/install-deps --backports "$(BACKPORTS)" $(DEB_PACKAGES)

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: src/bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard src/bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

# The kernel types the programs relocate against, cut from this kernel's BTF, and the
# size and CRC32 of that BTF (with kernel.notes: how run time tells it is this kernel).
$(BUILD)/min_core.btf: $(BPF_OBJS) $(BUILD)/vmlinux.h
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) gen min_core_btf /sys/kernel/btf/vmlinux $@ $(BPF_OBJS)

$(BUILD)/min_core_btf.h: $(BUILD)/vmlinux.h
	$(call msg,GEN,$@)
	$(Q)printf '#define MIN_CORE_BTF_VMLINUX_SIZE %sul\n#define MIN_CORE_BTF_VMLINUX_CRC32 0x%sul\n' \
		"$$(wc -c </sys/kernel/btf/vmlinux)" \
		"$$(gzip -c /sys/kernel/btf/vmlinux | tail -c8 | od -An -tx4 -N4 | tr -d ' ')" >$@

# The kernel's notes: its build-id tells at run time, from a few hundred bytes, whether
# the running kernel is this one (empty where it cannot be read: the CRC32 decides).
$(BUILD)/kernel.notes: $(BUILD)/vmlinux.h
	$(call msg,GEN,$@)
	$(Q)cat /sys/kernel/notes >$@ 2>/dev/null || : >$@

$(BUILD)/bpf/corebtf.o: $(BUILD)/min_core_btf.h
$(BUILD)/bpf/corebtf_blob.o: $(BUILD)/min_core.btf $(BUILD)/kernel.notes

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

# Header dependencies come from -MMD; skeletons must exist before any object compiles;
# the Makefile itself holds the flags.
$(BUILD)/%.o: src/%.c Makefile | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DBTAP_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: src/%.S Makefile
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DBTAP_CPPFLAGS) -c $< -o $@

$(DBTAP_BIN): $(APP_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DBTAP_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -Itests/unit $< $(LIB_OBJS) $(LDLIBS) $(CMOCKA_LIBS) -o $@

# test_oom makes the Nth allocation fail: its allocator calls go through wrappers.
$(BUILD)/tests/test_oom: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

# Test workloads: deterministic targets with known instructions and USDT sites.
# The profiler's targets keep frame pointers, as PostgreSQL's Debian build does.
workloads: $(WORKLOADS)
$(WL_DIR)/profloop $(WL_DIR)/jitloop $(WL_DIR)/stacktree $(WL_DIR)/cxxloop: WL_CFLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
$(WL_DIR)/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -O1 -g -Wall -Werror $(WL_CFLAGS) $(LDFLAGS) -o $@ $< -lm -lpthread
$(WL_DIR)/%: tests/workloads/%.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CPPFLAGS) -O1 -g -Wall -Werror $(WL_CFLAGS) $(LDFLAGS) -o $@ $<
$(WL_DIR)/%: tests/workloads/%.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -g $(LDFLAGS) -o $@ $<
$(WL_DIR)/%.class: tests/workloads/%.java
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(JAVAC) -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -d $(@D) $<

unit-test: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; $$t; done

# TAP_JOBS: how many test files run at a time, two by default (tests/t/parallel.yml
# says which must not run together and starts the longest first). Most of a file's
# time is spent waiting (a run's -d, a server starting, a workload): the suite takes
# about 310 s of CPU, its servers included, in the 480 s it runs one file at a time on
# a quiet machine, so two files at a time overlap their waits even on two CPUs. Each
# file runs in a scheduler autogroup of its own (tests/lib/test-lib.sh). TAP_JOBS=1:
# one after another, in the files' order. The SANITIZE subset runs one at a time.
TAP_JOBS ?= 2
tap-test: $(DBTAP_BIN) workloads
	@cd tests/t && DBTAP_BIN=$(abspath $(DBTAP_BIN)) DBTAP_TEST_LONG=$(LONG) \
		$(if $(filter-out 1,$(TAP_JOBS)),HARNESS_RULESFILE=parallel.yml) \
		prove --timer -j$(TAP_JOBS) $(if $(T),$(T),t[0-9]*.sh)

# A plain `make check` (CI runs it so) builds on every CPU; a -jN given is kept. Expanded
# in the recipes, where MAKEFLAGS holds the -j of the command line.
CHECK_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))

ifeq ($(SANITIZE),1)
# A short subset: bad input of every kind, a probe attached and detached, a saved run.
SAN_TAP ?= t0000-basic.sh t0300-errors.sh t2200-target-errors.sh t3003-watch-expr.sh \
           t5002-stat-compare.sh t8003-serve-http-conn.sh
check: deps
	@$(MAKE) --no-print-directory $(CHECK_J) all
	@$(MAKE) --no-print-directory $(CHECK_J) unit-test
	@$(MAKE) --no-print-directory tap-test T='$(SAN_TAP)' TAP_JOBS=1
else
check: deps
	@$(MAKE) --no-print-directory $(CHECK_J) all
	@$(MAKE) --no-print-directory $(CHECK_J) unit-test
	@$(MAKE) --no-print-directory $(CHECK_J) fuzz-check
	@$(MAKE) --no-print-directory tap-test
endif

demo: deps
	@$(MAKE) --no-print-directory all
	@tools/demo

install: dbtap
	install -D -m 0755 dbtap $(DESTDIR)$(PREFIX)/bin/dbtap
	install -d $(DESTDIR)$(PREFIX)/share/doc/dbtap
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/dbtap/

-include $(APP_OBJS:.o=.d)

include tests/fuzz/fuzz.mk

clean:
	rm -rf $(BUILD) dbtap
