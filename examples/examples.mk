# examples.mk - included by GNUmakefile.
#
# `make example` runs the bundled examples: a check suite with every test
# under memcheck, and an unmodified program with a leak, preloaded.
# `make examples-check` (part of `make check`) keeps them true.

EX_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g \
	-fno-omit-frame-pointer -Iinclude -Iexamples
EX := $(B)/examples

$(EX)/check_wordcount: examples/check_wordcount.c examples/wordcount.c examples/wordcount.h include/memcheck/check.h include/memcheck/memcheck.h \
		$(B)/libmemcheck.so | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/check_wordcount.c examples/wordcount.c \
		-L$(B) -Wl,-rpath,'$$ORIGIN/..' -lmemcheck $(CHECK_LIBS)

# Not linked to memcheck: it is preloaded, as an unmodified program would be.
$(EX)/leaky: examples/leaky.c examples/wordcount.c examples/wordcount.h | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/leaky.c examples/wordcount.c

# The same program linked with the static archive instead: memcheck's
# code then lies inside the program's, and stacks must still start at
# the program's call.
$(EX)/leaky-linked: examples/leaky.c examples/wordcount.c examples/wordcount.h $(ARLIB) | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/leaky.c examples/wordcount.c $(ARLIB) -ldl -pthread

.PHONY: example examples-check
example: all $(EX)/check_wordcount $(EX)/leaky
	@echo "== a check suite, every test in its own memcheck region"
	$(EX)/check_wordcount
	@echo
	@echo "== an unmodified program, preloaded; the JSON report is $(EX)/leaky.jsonl"
	rm -f $(EX)/leaky.jsonl
	@echo 'LD_PRELOAD=$(CURDIR)/$(B)/libmemcheck.so MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky.jsonl $(EX)/leaky'
	@LD_PRELOAD=$(CURDIR)/$(B)/libmemcheck.so MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky.jsonl \
		$(EX)/leaky; rc=$$?; [ $$rc = 23 ] && \
		echo "(exit status 23: the leak fails the process, as MEMCHECK_EXITCODE says)"; \
		[ $$rc = 23 ]
	@echo
	@echo "== the same under valgrind: valgrind's leak figures, memcheck's counts"
	-$(B)/memcheck run --valgrind -- $(EX)/leaky

# The suite must pass, and the preloaded run must find exactly the leak
# leaky.c has: the table (definitely lost) and its buckets, which only the
# table points to (indirectly lost), as valgrind counts them.
examples-check: all $(EX)/check_wordcount $(EX)/leaky $(EX)/leaky-linked demo-check
	$(EX)/check_wordcount
	CK_FORK=no $(EX)/check_wordcount
	rm -f $(EX)/leaky.jsonl
# The leak fails the process: exit status 23 where leaky.c returns 0.
	LD_PRELOAD=$(CURDIR)/$(B)/libmemcheck.so MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky.jsonl \
		MEMCHECK_TEXT=none $(EX)/leaky > $(EX)/leaky.out; rc=$$?; [ $$rc = 23 ] || \
		{ echo "examples-check: leaky exited $$rc, expected 23 (MEMCHECK_EXITCODE)"; exit 1; }
	grep -q '"definitely_lost":{"blocks":1,"bytes":24},"indirectly_lost":{"blocks":1,"bytes":64}' \
		$(EX)/leaky.jsonl || { echo "examples-check: leaky.c's leak not found as 1 definite" \
		"and 1 indirect block:"; cat $(EX)/leaky.jsonl; exit 1; }
	grep -q '"function":"wc_new","file":"examples/wordcount.c"' $(EX)/leaky.jsonl || \
		{ echo "examples-check: leak stack does not start in wc_new"; exit 1; }
	grep -q '"function":"distinct_words","file":"examples/leaky.c","line":16' $(EX)/leaky.jsonl || \
		{ echo "examples-check: leak stack does not point at distinct_words, leaky.c:16"; exit 1; }
	rm -f $(EX)/leaky-linked.jsonl
	MEMCHECK_PROCESS=on MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky-linked.jsonl MEMCHECK_TEXT=none \
		$(EX)/leaky-linked > $(EX)/leaky-linked.out; [ $$? = 23 ] || \
		{ echo "examples-check: leaky-linked did not exit 23"; exit 1; }
	grep -q '"stack":\[{"address":"[0-9a-fx]*","function":"wc_new","file":"examples/wordcount.c"' \
		$(EX)/leaky-linked.jsonl || { echo "examples-check: linked with libmemcheck.a, the" \
		"leak stack does not start in wc_new:"; cat $(EX)/leaky-linked.jsonl; exit 1; }
# Under valgrind (when installed) the same leak, valgrind's figures:
# definitely and indirectly lost as one sum.
	@if command -v valgrind >/dev/null; then \
		rm -f $(EX)/leaky-vg.jsonl; \
		$(B)/memcheck run --valgrind --report $(EX)/leaky-vg.jsonl -- $(EX)/leaky \
			> $(EX)/leaky-vg.out 2>&1; \
		grep -q '"definitely_lost":{"blocks":2,"bytes":88},"indirectly_lost":null.*"leak_check":"valgrind"' \
			$(EX)/leaky-vg.jsonl || { cat $(EX)/leaky-vg.out; echo "examples-check: under" \
			"valgrind, leaky.c's 88 bytes in 2 blocks not found as valgrind's"; exit 1; }; \
	fi

# ---- the allocator-swap demo ------------------------------------------
$(EX)/check_batches: examples/check_batches.c include/memcheck/check.h include/memcheck/memcheck.h \
		$(B)/libmemcheck.so | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/check_batches.c \
		-L$(B) -Wl,-rpath,'$$ORIGIN/..' -lmemcheck $(CHECK_LIBS)

# --repeat auto (the default, spelt out): mimalloc and jemalloc give memory
# back on a timer, so they run three times and are gated on the median
# (memcheck(1), NOISY ALLOCATORS); glibc and tcmalloc run once.
# --timeline and --html: the page a CI job keeps (html-check opens it).
DEMO_RUN = $(B)/memcheck run --repeat auto --budget examples/memcheck.budget --timeline \
	--report $(EX)/demo.jsonl --junit $(EX)/demo.xml --html $(EX)/demo.html -- $(EX)/check_batches

.PHONY: demo demo-check
# The gate is meant to fail here (mimalloc): exit 1 is the demo working.
demo: all $(B)/memcheck $(EX)/check_batches
	@echo "== examples/check_batches under glibc, mimalloc, jemalloc and tcmalloc,"
	@echo "== gated by examples/memcheck.budget; the allocators that give memory back"
	@echo "== on a timer run three times, gated on the median"
	@$(DEMO_RUN); rc=$$?; echo; \
	if [ $$rc -eq 1 ]; then \
		echo "demo: memcheck run exited 1: the budget caught the swap that costs memory."; \
		echo "demo: records in $(EX)/demo.jsonl, JUnit in $(EX)/demo.xml, the page in $(EX)/demo.html"; \
	else \
		echo "demo: memcheck run exited $$rc; expected 1 (mimalloc over budget)"; exit 1; \
	fi

# The demo's claim, checked: mimalloc fails the relative limit, the
# other three allocators pass every test.  Judged by `memcheck gate` on the
# stored report, as `run` judged it (measured figures on the median of an
# allocator's runs): a record's own verdict is its run's alone.
demo-check: all $(B)/memcheck $(EX)/check_batches
	@$(DEMO_RUN) > $(EX)/demo.out 2>&1; rc=$$?; \
	if [ $$rc -ne 1 ]; then cat $(EX)/demo.out; echo "demo-check: exit $$rc, expected 1"; exit 1; fi
	@$(B)/memcheck gate --budget examples/memcheck.budget $(EX)/demo.jsonl > $(EX)/demo-gate.out; \
	if [ $$? -ne 1 ]; then cat $(EX)/demo-gate.out; echo "demo-check: gate did not fail"; exit 1; fi
	@for a in glibc jemalloc tcmalloc; do \
		if grep -q "^FAIL .*($$a, " $(EX)/demo-gate.out; then \
			cat $(EX)/demo.out $(EX)/demo-gate.out; echo "demo-check: $$a failed a budget"; exit 1; fi; \
		grep -q "\"allocator\":\"$$a\"" $(EX)/demo.jsonl || \
			{ echo "demo-check: no record for $$a"; exit 1; }; \
	done
	@grep -q '^FAIL check_batches "keeps_a_sample_of_each_batch" (mimalloc, ' $(EX)/demo-gate.out || \
		{ cat $(EX)/demo.out $(EX)/demo-gate.out; echo "demo-check: mimalloc passed"; exit 1; }
	@grep -q 'jemalloc       3 runs' $(EX)/demo.out || \
		{ cat $(EX)/demo.out; echo "demo-check: jemalloc, which purges on a timer, did not run 3 times"; exit 1; }
	@grep -A2 'peak_rss .* > .* (2x glibc' $(EX)/demo.out | grep -q 'at the peak of live bytes' || \
		{ cat $(EX)/demo.out; echo "demo-check: no sites under mimalloc's peak_rss violation"; exit 1; }
	@echo "demo-check: mimalloc fails the relative peak_rss limit (on its median), glibc, jemalloc and tcmalloc pass"

# The demo's page in a real browser (tests/html_check.sh): no script
# errors, its charts there (a bar chart and a timeline for each of the
# suite's tests), a screenshot kept.  Skipped, saying so, without Chromium.
.PHONY: html-check
html-check: demo-check
	@sh tests/html_check.sh $(EX)/demo.html $(EX)/demo.png \
		$$(( 2 * $$(grep -c '"allocator":"glibc"' $(EX)/demo.jsonl) ))

# ---- the failure-injection demo ---------------------------------------
$(EX)/check_kvparse: examples/check_kvparse.c examples/kvparse.c examples/kvparse.h \
		include/memcheck/check.h $(B)/libmemcheck.so | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/check_kvparse.c examples/kvparse.c \
		-L$(B) -Wl,-rpath,'$$ORIGIN/..' -lmemcheck $(CHECK_LIBS)

OOM_RUN = $(B)/memcheck oom --report $(EX)/oom.json -- $(EX)/check_kvparse

.PHONY: oom-demo oom-demo-check
# memcheck oom is meant to exit 1 here: kvparse.c has two broken error paths.
oom-demo: all $(B)/memcheck $(EX)/check_kvparse
	@echo "== examples/check_kvparse passes; now every allocation of each test fails in turn"
	@$(OOM_RUN); rc=$$?; echo; \
	if [ $$rc -eq 1 ]; then \
		echo "oom-demo: memcheck oom exited 1: kvparse.c crashes and leaks when malloc fails."; \
		echo "oom-demo: the sweep as JSON is $(EX)/oom.json"; \
	else \
		echo "oom-demo: memcheck oom exited $$rc; expected 1"; exit 1; \
	fi

# The demo's claim, checked: the sweep finds the crash and the leak at the
# lines kvparse.c marks, and nothing else goes wrong.
oom-demo-check: all $(B)/memcheck $(EX)/check_kvparse
	@$(EX)/check_kvparse > /dev/null 2>&1 || { echo "oom-demo-check: check_kvparse fails on its own"; exit 1; }
	@$(OOM_RUN) > $(EX)/oom.out 2>&1; rc=$$?; \
	if [ $$rc -ne 1 ]; then cat $(EX)/oom.out; echo "oom-demo-check: exit $$rc, expected 1"; exit 1; fi; \
	crash=$$(grep -n 'OOM-DEMO: unchecked' examples/kvparse.c | cut -d: -f1); \
	leak=$$(grep -n 'OOM-DEMO: leaks the key' examples/kvparse.c | cut -d: -f1); \
	grep -q "^examples/kvparse.c:$$crash: crashed in kv_add" $(EX)/oom.out || \
		{ cat $(EX)/oom.out; echo "oom-demo-check: the crash at kvparse.c:$$crash was not found"; exit 1; }; \
	grep -q "^examples/kvparse.c:$$leak: leaked in kv_add" $(EX)/oom.out || \
		{ cat $(EX)/oom.out; echo "oom-demo-check: the leak at kvparse.c:$$leak was not found"; exit 1; }; \
	grep -q "allocated at examples/kvparse.c:$$((crash + 1))" $(EX)/oom.out || \
		{ cat $(EX)/oom.out; echo "oom-demo-check: the leaked key's allocation (kvparse.c:$$((crash + 1))) not named"; exit 1; }; \
	n=$$(grep -c ': \(leaked\|crashed\|test failed\) in ' $(EX)/oom.out); \
	if [ "$$n" -ne 2 ]; then cat $(EX)/oom.out; echo "oom-demo-check: $$n problems, expected exactly 2"; exit 1; fi
	@grep -q '"totals":{[^}]*"leaked":[1-9][^}]*"crashed":[1-9]' $(EX)/oom.json || \
		{ cat $(EX)/oom.json; echo "oom-demo-check: $(EX)/oom.json does not count the leak and the crash"; exit 1; }
	@echo "oom-demo-check: memcheck oom finds kvparse.c's crash and leak at their lines"

examples-check: oom-demo-check
