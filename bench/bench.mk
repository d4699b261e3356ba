# bench.mk - included by GNUmakefile: `make bench`.
#
# Measures what memcheck costs on a malloc-heavy program under each
# allocator that is installed, against the bare run, and prints a table.
# A measurement, not a test: a missed target prints MISS but does not
# fail the build.  About 3.5 minutes with the defaults (4 with VALGRIND=1).
#
#   make bench BENCH_ITERS=40000000 BENCH_RUNS=5 BENCH_THREADS=4 VALGRIND=1
#   make bench BENCH_OTHER=/work/main/build/libmemcheck.so   (before/after)

# 40M steps: a bare glibc run takes ~0.6 s here, long enough that start-up
# and exit are noise, short enough for 5 interleaved rounds of every mode.
BENCH_ITERS   ?= 40000000
BENCH_RUNS    ?= 5
BENCH_THREADS ?= 4
VALGRIND      ?= 0
BENCH_OTHER   ?=

# -fno-builtin: compilers know malloc/free and delete pairs whose block
# never escapes, which would leave nothing to measure.  Frame pointers:
# the fp unwinder then walks the program's real frames, as it would in a
# suite built for memcheck, instead of stopping at the first frame.  Not
# linked with memcheck: run.sh preloads it, in front of each allocator.
BENCH_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -fno-builtin \
	-fno-omit-frame-pointer -pthread

BENCH_BINS := $(B)/bench/malloc_bench $(B)/bench/malloc_bench_lsan \
	$(B)/bench/libnull_interpose.so

$(B)/bench:
	mkdir -p $@

$(B)/bench/malloc_bench: bench/malloc_bench.c | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# A preload that only forwards malloc/free/calloc/realloc: the floor under
# memcheck's count mode, timed beside it.
$(B)/bench/libnull_interpose.so: bench/null_interpose.c | $(B)/bench
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -fno-builtin \
		-o $@ $< -ldl

# The same program under LeakSanitizer, for comparison.  Optional: gcc
# ships liblsan, other compilers may not, and then run.sh leaves it out.
$(B)/bench/malloc_bench_lsan: bench/malloc_bench.c | $(B)/bench
	$(CC) $(BENCH_CFLAGS) -fsanitize=leak -o $@ $< || \
		{ echo "bench: no -fsanitize=leak here; LeakSanitizer left out"; rm -f $@; }

bench: all $(BENCH_BINS)
	BENCH_ITERS=$(BENCH_ITERS) BENCH_RUNS=$(BENCH_RUNS) \
		BENCH_THREADS=$(BENCH_THREADS) VALGRIND=$(VALGRIND) BENCH_OTHER=$(BENCH_OTHER) \
		bash bench/run.sh $(B)
