# Fuzzing the readers with clang's libFuzzer (ASan + UBSan), one target per
# reader in tests/fuzz/fuzz_<reader>.c, seeds in tests/fuzz/corpus/<reader>/.
#   make fuzz                      build, then run each target FUZZ_SECONDS (default 20) seconds
#   make fuzz FUZZ_RUNS=100000     run each target on a fixed number of inputs instead
#   make fuzz-build                only build (build-fuzz/)
#   make fuzz-seeds                regenerate the seed corpora (tests/fuzz/make_seeds.sh)
# A user error (die_user) is a rejected input; an internal error (exit 1), any
# other exit, a sanitizer report, a leak, a timeout (FUZZ_TIMEOUT s per input)
# or an allocation above FUZZ_MALLOC_MB is a crash: the run stops, leaves the
# input in build-fuzz/artifacts/ and `make fuzz` fails. New inputs found go to
# build-fuzz/corpus/<reader>/ (the committed seeds are only read).

FUZZ_DEB_PACKAGES := clang-14 libclang-rt-14-dev
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 20
FUZZ_RUNS ?=
FUZZ_TIMEOUT ?= 10
FUZZ_MALLOC_MB ?= 1024
FUZZ_BUILD := build-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -I. $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_LIBOBJ := $(LIBSRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_MODE = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))

.PHONY: fuzz fuzz-build fuzz-deps fuzz-seeds

fuzz-deps: deps
	@./scripts/deps.sh $(FUZZ_DEB_PACKAGES)

$(FUZZ_BUILD)/%.o: %.c | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libtoolkit.a: $(FUZZ_LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_BUILD)/libtoolkit.a | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d $< $(FUZZ_BUILD)/libtoolkit.a $(PKG_LIBS) -lm -o $@

fuzz-build: $(FUZZ_TARGETS)

fuzz-seeds:
	@./tests/fuzz/make_seeds.sh tests/fuzz/corpus

# Each target in turn; stops at the first crash. OPENBLAS_NUM_THREADS=1: one
# core per target, nothing left running in the background.
fuzz: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@set -e; for t in $(FUZZ_TARGETS); do \
	  r=$${t##*/fuzz_}; mkdir -p $(FUZZ_BUILD)/corpus/$$r; \
	  echo "== fuzz $$r ($(FUZZ_MODE))"; \
	  OPENBLAS_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $$t $(FUZZ_MODE) -timeout=$(FUZZ_TIMEOUT) -malloc_limit_mb=$(FUZZ_MALLOC_MB) -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$r- \
	    $(FUZZ_BUILD)/corpus/$$r tests/fuzz/corpus/$$r 2>$(FUZZ_BUILD)/$$r.log \
	    || { tail -n 40 $(FUZZ_BUILD)/$$r.log; echo "fuzz $$r: CRASH (log $(FUZZ_BUILD)/$$r.log)"; exit 1; }; \
	  grep -E '^(stat::number_of_executed_units|Done )' $(FUZZ_BUILD)/$$r.log | tr '\n' ' '; echo; \
	done; echo "fuzz: every target ran without a crash"

-include $(FUZZ_LIBOBJ:.o=.d) $(FUZZ_TARGETS:%=%.d)
