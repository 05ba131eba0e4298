# libFuzzer targets (tests/fuzz/fuzz_NAME.c), included by the top Makefile.
# Every object of dbtap but main.o is rebuilt with clang, coverage instrumentation,
# AddressSanitizer and UndefinedBehaviorSanitizer into build/fuzz/obj, so a target can
# call any parser. `make fuzz` runs each target FUZZ_S seconds; `make fuzz-check`
# (part of `make check`) runs each over its seeds and regression inputs, then
# FUZZ_CHECK_S seconds of new inputs, FUZZ_JOBS targets at a time.

FUZZ_CC      ?= clang
FUZZ_S       ?= 60
FUZZ_CHECK_S ?= 2
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -O1 -g $(FUZZ_SAN) -Wall -Wno-unused-parameter -Wno-missing-field-initializers \
                -std=gnu11 -D_GNU_SOURCE -DDBTAP_VERSION='"$(VERSION)"' -Isrc -I$(BUILD) -Itests/fuzz
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_C_OBJS  := $(patsubst src/%.c,$(BUILD)/fuzz/obj/%.o,$(filter-out src/main.c,$(APP_SRCS)))
FUZZ_OBJS    := $(FUZZ_C_OBJS) $(patsubst src/%.S,$(BUILD)/%.o,$(APP_ASMS))

.PHONY: fuzz fuzz-build fuzz-check

$(BUILD)/fuzz/obj/%.o: src/%.c | $(SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_syms.h $(FUZZ_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(LDLIBS) -o $@

# objects are kept between builds, like the top Makefile's
.SECONDARY: $(FUZZ_C_OBJS)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@tests/fuzz/run $(FUZZ_S) $(FUZZ)

# each target is one process: fuzz-check runs one per CPU at a time
FUZZ_JOBS ?= $(shell nproc)
fuzz-check: fuzz-build
	@tests/fuzz/run --check -j $(FUZZ_JOBS) $(FUZZ_CHECK_S) $(FUZZ)

$(BUILD)/fuzz/obj/bpf/corebtf.o: $(BUILD)/min_core_btf.h

-include $(FUZZ_C_OBJS:.o=.d)
