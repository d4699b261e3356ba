# examples.mk - included by GNUmakefile.
#
# `make example` runs the bundled examples: a check suite with every test
# under memcheck, and an unmodified program with a leak, preloaded.
# `make examples-check` (part of `make check`) keeps them true.

EX_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g \
	-fno-omit-frame-pointer -Iinclude -Iexamples
EX := $(B)/examples

$(EX)/check_wordcount: examples/check_wordcount.c examples/wordcount.c examples/wordcount.h include/memcheck/check.h \
		$(B)/libmemcheck.so | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/check_wordcount.c examples/wordcount.c \
		-L$(B) -Wl,-rpath,'$$ORIGIN/..' -lmemcheck $(CHECK_LIBS)

# Not linked to memcheck: it is preloaded, as an unmodified program would be.
$(EX)/leaky: examples/leaky.c examples/wordcount.c examples/wordcount.h | $(EX)
	$(CC) $(EX_CFLAGS) -o $@ examples/leaky.c examples/wordcount.c

.PHONY: example examples-check
example: all $(EX)/check_wordcount $(EX)/leaky
	@echo "== a check suite, every test in its own memcheck region"
	$(EX)/check_wordcount
	@echo
	@echo "== an unmodified program, preloaded; the JSON report is $(EX)/leaky.jsonl"
	rm -f $(EX)/leaky.jsonl
	LD_PRELOAD=$(CURDIR)/$(B)/libmemcheck.so MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky.jsonl \
		$(EX)/leaky

# The suite must pass, and the preloaded run must find exactly the leak
# leaky.c has: the table and its buckets from the empty text (2 blocks).
examples-check: all $(EX)/check_wordcount $(EX)/leaky
	$(EX)/check_wordcount
	rm -f $(EX)/leaky.jsonl
	LD_PRELOAD=$(CURDIR)/$(B)/libmemcheck.so MEMCHECK_REPORT=$(CURDIR)/$(EX)/leaky.jsonl \
		MEMCHECK_TEXT=none $(EX)/leaky > $(EX)/leaky.out
	grep -q '"definitely_lost":{"blocks":2,' $(EX)/leaky.jsonl || \
		{ echo "examples-check: leaky.c's leak not found as 2 blocks:"; cat $(EX)/leaky.jsonl; exit 1; }
	grep -q '"function":"wc_new","file":"examples/wordcount.c"' $(EX)/leaky.jsonl || \
		{ echo "examples-check: leak stack does not start in wc_new"; exit 1; }
	grep -q '"file":"examples/leaky.c","line":16' $(EX)/leaky.jsonl || \
		{ echo "examples-check: leak stack does not point at leaky.c:16"; exit 1; }
