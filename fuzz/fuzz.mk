# fuzz.mk - included by GNUmakefile: the hand-written budget parser
# (lib/budget.c) under libFuzzer, ASan and UBSan.
#
#   make fuzz         build $(B)/fuzz/fuzz_budget with clang's libFuzzer
#                     (Debian: apt-get install clang libclang-rt-14-dev)
#   make fuzz-check   run it for FUZZ_SECONDS (20) from fuzz/corpus, new
#                     inputs kept in $(B)/fuzz/corpus, a crash saved as
#                     $(B)/fuzz/crash-*; without a libFuzzer to build with,
#                     say so and replay the corpus instead
#   make fuzz-replay  the seed corpus through the same target built with
#                     $(CC) and ASan/UBSan: no libFuzzer needed, well under
#                     a second
#
# A crash reproduces with: $(B)/fuzz/fuzz_budget $(B)/fuzz/crash-<hash>

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_BIN     := $(B)/fuzz/fuzz_budget
FUZZ_REPLAY  := $(B)/fuzz/replay_budget
FUZZ_SRC     := fuzz/fuzz_budget.c lib/budget.c lib/util.c
FUZZ_DEPS    := $(FUZZ_SRC) lib/internal.h include/memcheck/memcheck.h
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CORPUS  := $(sort $(wildcard fuzz/corpus/*))

.PHONY: fuzz fuzz-check fuzz-replay

$(B)/fuzz:
	mkdir -p $@

$(FUZZ_BIN): $(FUZZ_DEPS) | $(B)/fuzz
	$(FUZZ_CC) $(BASE) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $(FUZZ_SRC)

$(FUZZ_REPLAY): $(FUZZ_DEPS) | $(B)/fuzz
	$(CC) $(BASE) -O1 -g -DFUZZ_REPLAY $(FUZZ_SAN) -o $@ $(FUZZ_SRC)

fuzz: $(FUZZ_BIN)

fuzz-replay: $(FUZZ_REPLAY)
	@ASAN_OPTIONS=detect_leaks=1 $(FUZZ_REPLAY) $(FUZZ_CORPUS)

# libFuzzer's progress goes to $(B)/fuzz/fuzz.log; its last lines are
# shown when it finds something.  -max_len covers the 4096-byte line limit.
fuzz-check: | $(B)/fuzz
	@if ! $(MAKE) --no-print-directory $(FUZZ_BIN) >$(B)/fuzz/build.log 2>&1; then \
		echo "fuzz-check: cannot build the libFuzzer target with $(FUZZ_CC)" \
			"(see $(B)/fuzz/build.log; Debian: apt-get install clang libclang-rt-14-dev);" \
			"replaying fuzz/corpus instead"; \
		$(MAKE) --no-print-directory fuzz-replay; \
		exit $$?; \
	fi; \
	mkdir -p $(B)/fuzz/corpus; \
	echo "fuzz-check: fuzzing lib/budget.c for $(FUZZ_SECONDS) s (log: $(B)/fuzz/fuzz.log)"; \
	if $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 \
		-dict=fuzz/budget.dict -artifact_prefix=$(B)/fuzz/ \
		$(B)/fuzz/corpus fuzz/corpus >$(B)/fuzz/fuzz.log 2>&1; then \
		grep -E '^#[0-9]+' $(B)/fuzz/fuzz.log | tail -n 1 | sed 's/^/fuzz-check: /'; \
		grep -E '^Done [0-9]+ runs' $(B)/fuzz/fuzz.log | sed 's/^/fuzz-check: /'; \
	else \
		tail -n 40 $(B)/fuzz/fuzz.log; \
		echo "fuzz-check: the fuzzer found a bug; the input is saved as $(B)/fuzz/crash-*"; \
		exit 1; \
	fi
