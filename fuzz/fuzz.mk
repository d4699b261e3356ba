# fuzz.mk - included by GNUmakefile: the hand-written parsers under
# libFuzzer, ASan and UBSan, one target each:
#   budget  lib/budget.c and budget_check.c, budget files (fuzz/fuzz_budget.c,
#           seeds fuzz/corpus)
#   supp    lib/suppress.c, suppression files (fuzz/fuzz_supp.c, seeds
#           fuzz/corpus_supp)
#   cfi     lib/cfi.c, call-frame information (.eh_frame_hdr and .eh_frame)
#           and a return address (fuzz/fuzz_cfi.c, seeds fuzz/corpus_cfi)
#   report  lib/buf.c's escaping of names in the text and the JSON, and
#           lib/json.c's record reader (fuzz/fuzz_report.c, seeds
#           fuzz/corpus_report)
#   symcache lib/symcache.c's reading of cache files, memcheck-cache(5)
#           (fuzz/fuzz_symcache.c, seeds fuzz/corpus_symcache)
#   suppcache lib/suppcache.c's reading of the cache's suppression file
#           and suppress.c's image in it, memcheck-cache(5)
#           (fuzz/fuzz_suppcache.c, seeds fuzz/corpus_suppcache)
#   records tools/records.c's reading of whole report files for memcheck
#           run, compare and gate: cut short at many bytes, a byte
#           changed; nothing lost silently (fuzz/fuzz_records.c, seeds
#           fuzz/corpus_records: real reports)
#   options lib/options.c's reading of the MEMCHECK_* variables, an
#           environment of NUL-separated strings, against a model of the
#           manual's rules (fuzz/fuzz_options.c, seeds fuzz/corpus_options)
#
#   make fuzz         build $(B)/fuzz/fuzz_<target> with clang's libFuzzer
#                     (Debian: apt-get install clang libclang-rt-14-dev)
#   make fuzz-check   run each for FUZZ_SECONDS (20) from its seeds, new
#                     inputs kept in $(B)/fuzz/corpus-<target>, a crash saved
#                     as $(B)/fuzz/crash-*; without a libFuzzer to build with,
#                     say so and replay the seeds instead
#   make fuzz-replay  the seed corpora through the same targets built with
#                     $(CC) and ASan/UBSan: no libFuzzer needed, well under
#                     a second
#   FUZZ_TARGETS=supp picks one.
#
# A crash reproduces with: $(B)/fuzz/fuzz_<target> $(B)/fuzz/crash-<hash>

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= budget supp cfi report symcache suppcache records options
FUZZ_SRC_budget   := fuzz/fuzz_budget.c lib/budget.c lib/budget_check.c $(UTIL:%=lib/%.c)
FUZZ_SEEDS_budget := fuzz/corpus
FUZZ_SRC_supp     := fuzz/fuzz_supp.c lib/suppress.c $(UTIL:%=lib/%.c)
FUZZ_SEEDS_supp   := fuzz/corpus_supp
FUZZ_SRC_cfi      := fuzz/fuzz_cfi.c lib/cfi.c lib/ownread.c $(UTIL:%=lib/%.c)
FUZZ_SEEDS_cfi    := fuzz/corpus_cfi
FUZZ_SRC_report   := fuzz/fuzz_report.c lib/json.c $(UTIL:%=lib/%.c) lib/programs.c lib/options.c
FUZZ_SEEDS_report := fuzz/corpus_report
FUZZ_SRC_symcache   := fuzz/fuzz_symcache.c lib/symcache.c $(UTIL:%=lib/%.c) lib/options.c lib/programs.c
FUZZ_SEEDS_symcache := fuzz/corpus_symcache
FUZZ_SRC_suppcache   := fuzz/fuzz_suppcache.c lib/suppcache.c lib/suppress.c lib/symcache.c lib/ownread.c \
			$(UTIL:%=lib/%.c) lib/options.c lib/programs.c
FUZZ_SEEDS_suppcache := fuzz/corpus_suppcache
# the CLI's reader, with the library files the CLI is built with (tools.mk)
FUZZ_SRC_records   = fuzz/fuzz_records.c tools/records.c tools/pairing.c tools/helpers.c $(CLI_LIB:%=lib/%.c)
FUZZ_SEEDS_records := fuzz/corpus_records
FUZZ_SRC_options   := fuzz/fuzz_options.c lib/options.c $(UTIL:%=lib/%.c) lib/programs.c
FUZZ_SEEDS_options := fuzz/corpus_options
FUZZ_FLAGS_records = -Itools $(CLI_DEFS)
FUZZ_HDRS    := lib/internal.h include/memcheck/memcheck.h
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: fuzz fuzz-check fuzz-replay

$(B)/fuzz:
	mkdir -p $@

# .SECONDEXPANSION is on (tests.mk): each target's own sources.
$(B)/fuzz/fuzz_%: $$(FUZZ_SRC_$$*) $(FUZZ_HDRS) tools/cli.h | $(B)/fuzz
	$(FUZZ_CC) $(BASE) $(FUZZ_FLAGS_$*) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $(FUZZ_SRC_$*)

$(B)/fuzz/replay_%: $$(FUZZ_SRC_$$*) fuzz/replay.c $(FUZZ_HDRS) tools/cli.h | $(B)/fuzz
	$(CC) $(BASE) $(FUZZ_FLAGS_$*) -O1 -g $(FUZZ_SAN) -o $@ $(FUZZ_SRC_$*) fuzz/replay.c

fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)

fuzz-replay: $(FUZZ_TARGETS:%=$(B)/fuzz/replay_%)
	@set -e; $(foreach t,$(FUZZ_TARGETS),ASAN_OPTIONS=detect_leaks=1 \
		$(B)/fuzz/replay_$(t) $(sort $(wildcard $(FUZZ_SEEDS_$(t))/*));)

# libFuzzer's progress goes to $(B)/fuzz/<target>.log; its last lines are
# shown when it finds something.  -max_len covers the 4096-byte line limit.
fuzz-check: | $(B)/fuzz
	@if ! $(MAKE) --no-print-directory fuzz >$(B)/fuzz/build.log 2>&1; then \
		echo "fuzz-check: cannot build the libFuzzer targets with $(FUZZ_CC)" \
			"(see $(B)/fuzz/build.log; Debian: apt-get install clang libclang-rt-14-dev);" \
			"replaying the seed corpora instead"; \
		$(MAKE) --no-print-directory fuzz-replay; \
		exit $$?; \
	fi; \
	for ts in $(foreach t,$(FUZZ_TARGETS),$(t):$(FUZZ_SEEDS_$(t))); do \
		t=$${ts%%:*}; seeds=$${ts#*:}; \
		log=$(B)/fuzz/$$t.log; \
		mkdir -p $(B)/fuzz/corpus-$$t; \
		echo "fuzz-check: fuzzing $$t for $(FUZZ_SECONDS) s (log: $$log)"; \
		if $(B)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 \
			-dict=fuzz/$$t.dict -artifact_prefix=$(B)/fuzz/ \
			$(B)/fuzz/corpus-$$t $$seeds >$$log 2>&1; then \
			grep -E '^#[0-9]+' $$log | tail -n 1 | sed "s/^/fuzz-check: $$t: /"; \
			grep -E '^Done [0-9]+ runs' $$log | sed "s/^/fuzz-check: $$t: /"; \
		else \
			tail -n 40 $$log; \
			echo "fuzz-check: the fuzzer found a bug in $$t; the input is saved as $(B)/fuzz/crash-*"; \
			exit 1; \
		fi; \
	done
