# bench.mk - included by GNUmakefile: `make bench`.
#
# Measures what memcheck costs on a malloc-heavy program under each
# allocator that is installed, against the bare run, and prints a table;
# then what a whole suite of short test processes costs (bench/suite.sh,
# also alone: make bench-suite), written as Markdown to build/bench/suite.md;
# then bench/chart.sh: one table of every row against issue 15's targets
# (bench/targets) and one chart, build/bench/bench.md and bench.svg.
# A measurement, not a test: a missed target prints MISS but does not
# fail the build.  About 3.5 minutes with the defaults at load 1.5 before
# the floor rows (4 with VALGRIND=1), and 1-2 more for the suite; at load
# 7-11 with the floor rows, 5 minutes a round and 2 a suite round
# (session 33).
#
#   make bench BENCH_ITERS=40000000 BENCH_RUNS=5 BENCH_THREADS=4 VALGRIND=1
#   make bench BENCH_OTHER=<another build>/libmemcheck.so   (before/after)
#   make bench-suite SUITE_PROCS=300 DATE_PROCS=200 BENCH_RUNS=5
#   make bench-instr INSTR_STEPS=100000 BENCH_OTHER=...  (callgrind: instructions
#       a step of each mode, the load-proof figures; build/bench/instr.md)
#   make bench-parts PARTS_STEPS=1000000 BENCH_OTHER=...  (callgrind's cache
#       and branch models: a tree_bench block's costs by function and mode;
#       build/bench/parts.md)
#   make bench-getenv BENCH_OTHER=... GETENV_ROUNDS=9  (getenv's ns a call,
#       bare against this library by turns: bench/getenv_bench.c)
#   make bench-pairs BENCH_OTHER=... PAIRS=1000 PAIRS_PROG='build/bench/suite_test 1'
#       (one short process, BENCH_OTHER's library against this one in
#       interleaved pairs: the median of the pairs' CPU time differences,
#       bench/suite_pairs.c, for start-up changes of a few microseconds)

# 40M steps: a bare glibc run takes ~0.6 s here, long enough that start-up
# and exit are noise, short enough for 5 interleaved rounds of every mode.
BENCH_ITERS   ?= 40000000
BENCH_RUNS    ?= 5
BENCH_THREADS ?= 4
VALGRIND      ?= 0
BENCH_OTHER   ?=
SUITE_PROCS   ?= 300
INSTR_STEPS   ?= 100000
PARTS_STEPS   ?= 1000000
DATE_PROCS    ?= 200
PAIRS         ?= 1000
PAIRS_PROG    ?= $(abspath $(B))/bench/suite_test 1

# -fno-builtin: compilers know malloc/free and delete pairs whose block
# never escapes, which would leave nothing to measure.  Frame pointers:
# the fp unwinder then walks the program's real frames, as it would in a
# suite built for memcheck, instead of stopping at the first frame.  Not
# linked with memcheck: run.sh preloads it, in front of each allocator.
BENCH_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -fno-builtin \
	-fno-omit-frame-pointer -pthread

BENCH_BINS := $(B)/bench/malloc_bench $(B)/bench/malloc_bench_lsan \
	$(B)/bench/libnull_interpose.so $(B)/bench/libfloor_interpose.so \
	$(B)/bench/tree_bench $(B)/bench/tree_bench_lsan
SUITE_BINS := $(B)/bench/suite_test $(B)/bench/suite_test_lsan \
	$(B)/bench/libfloor_interpose.so

$(B)/bench:
	mkdir -p $@

$(B)/bench/malloc_bench: bench/malloc_bench.c bench/bench.h | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The parser-shaped program, built as suites build (frame pointers,
# -O2), and under LeakSanitizer where the compiler has it.
$(B)/bench/tree_bench: bench/tree_bench.c bench/bench.h | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -o $@ $<

$(B)/bench/tree_bench_lsan: bench/tree_bench.c bench/bench.h | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -fsanitize=leak -o $@ $< || \
		{ echo "bench: no -fsanitize=leak here; LeakSanitizer left out"; rm -f $@; }

# A preload that only forwards malloc/free/calloc/realloc: the floor under
# memcheck's count mode, timed beside it.
$(B)/bench/libnull_interpose.so: bench/null_interpose.c bench/next.h bench/boot.h | $(B)/bench
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -fno-builtin \
		-o $@ $< -ldl

# The least a tracker of memcheck's kind must do a block (a frame-pointer
# walk hashed, a table of live blocks; with FLOOR_SCRUB, the scrub of
# memcheck's MEMCHECK_SCRUB): bench/floor_interpose.c, timed by run.sh
# and suite.sh in the same rounds as memcheck; bench/targets sets the
# proposed targets against it.
$(B)/bench/libfloor_interpose.so: bench/floor_interpose.c bench/next.h bench/boot.h | $(B)/bench
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -fno-builtin \
		-fno-omit-frame-pointer -o $@ $< -ldl

# The same program under LeakSanitizer, for comparison.  Optional: gcc
# ships liblsan, other compilers may not, and then run.sh leaves it out.
$(B)/bench/malloc_bench_lsan: bench/malloc_bench.c bench/bench.h | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -fsanitize=leak -o $@ $< || \
		{ echo "bench: no -fsanitize=leak here; LeakSanitizer left out"; rm -f $@; }

# A test process as suites build them (-g -O1, frame pointers), run
# hundreds of times by suite.sh; and the same under LeakSanitizer, left
# out where the compiler has no -fsanitize=leak.
SUITE_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O1 -g -fno-omit-frame-pointer

$(B)/bench/suite_test: bench/suite_test.c | $(B)/bench
	$(CC) $(SUITE_CFLAGS) -o $@ $<

$(B)/bench/suite_test_lsan: bench/suite_test.c | $(B)/bench
	$(CC) $(SUITE_CFLAGS) -fsanitize=leak -o $@ $< || \
		{ echo "bench: no -fsanitize=leak here; LeakSanitizer left out"; rm -f $@; }

$(B)/bench/suite_pairs: bench/suite_pairs.c | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# BENCH_OTHER's library as A, this build's as B (bench/suite_pairs.c).
bench-pairs: all $(B)/bench/suite_pairs $(B)/bench/suite_test
	@[ -n "$(BENCH_OTHER)" ] || { echo "bench-pairs: set BENCH_OTHER=<another build>/libmemcheck.so" >&2; exit 2; }
	$(B)/bench/suite_pairs $(BENCH_OTHER) $(abspath $(B))/libmemcheck.so $(PAIRS) $(PAIRS_PROG)

# getenv's cost a call, bare against this library (and BENCH_OTHER's), by
# turns: bench/getenv_bench.c (doc/costs.md env53)
GETENV_ROUNDS ?= 9
GETENV_CALLS  ?= 2000000
$(B)/bench/getenv_bench: bench/getenv_bench.c | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -o $@ $<

bench-getenv: all $(B)/bench/getenv_bench
	$(B)/bench/getenv_bench $(GETENV_ROUNDS) $(GETENV_CALLS) $(abspath $(B))/libmemcheck.so $(BENCH_OTHER)

.PHONY: bench-suite bench-chart bench-instr bench-parts bench-pairs bench-getenv
bench: all $(BENCH_BINS) $(SUITE_BINS)
	BENCH_ITERS=$(BENCH_ITERS) BENCH_RUNS=$(BENCH_RUNS) \
		BENCH_THREADS=$(BENCH_THREADS) VALGRIND=$(VALGRIND) BENCH_OTHER=$(BENCH_OTHER) \
		bash bench/run.sh $(B)
	$(MAKE) --no-print-directory bench-suite

# One table of every row and issue 15's targets, and one chart:
# build/bench/bench.md and bench.svg (doc/bench.svg is a copy of one run's).
bench-chart:
	bash bench/chart.sh $(B)

bench-suite: all $(SUITE_BINS)
	SUITE_PROCS=$(SUITE_PROCS) DATE_PROCS=$(DATE_PROCS) BENCH_RUNS=$(BENCH_RUNS) \
		BENCH_OTHER=$(BENCH_OTHER) bash bench/suite.sh $(B)
	bash bench/chart.sh $(B)

# Instructions a step of each mode (bench/instr.sh: callgrind at two
# lengths), which load does not move: a change's figures beside main's
# with BENCH_OTHER, the table in build/bench/instr.md.
bench-instr: all $(B)/bench/malloc_bench $(B)/bench/tree_bench $(B)/bench/libnull_interpose.so $(B)/bench/libfloor_interpose.so
	INSTR_STEPS=$(INSTR_STEPS) BENCH_OTHER=$(BENCH_OTHER) bash bench/instr.sh $(B)

# A tree_bench block by function: instructions, cache misses and
# mispredicts (callgrind's models) of each mode (bench/parts.sh),
# build/bench/parts.md.
bench-parts: all $(B)/bench/tree_bench $(B)/bench/libfloor_interpose.so
	PARTS_STEPS=$(PARTS_STEPS) BENCH_OTHER=$(BENCH_OTHER) bash bench/parts.sh $(B)
