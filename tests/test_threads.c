/*
 * test_threads.c - 4 threads x 100,000 allocations in one region, half
 * of them freed; two threads exit before the region ends, two are still
 * alive (tests/prog/threads).  The figures must be exact.  And thousands
 * of short detached threads that never allocate, under every allocator
 * (tests/prog/plain_idle_threads); rounds of threads under every
 * unwinder and allocator (tests/prog/plain_thread_rounds).  The peak of
 * live bytes of threads that allocate while the main thread, holding
 * most of the memory, waits for them (tests/prog/plain_peak_threads).
 * The peak threads reach while they race, exactly as the program reads
 * it (tests/prog/plain_peak_exact), also where reallocs cross it; the
 * counts of four threads exact under every allocator.  A region's end
 * lists the threads only when the process has others
 * (tests/prog/threadalone).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NTHREADS 4
#define PER_THREAD 100000
#define STR(n) XSTR(n)
#define XSTR(n) #n

/* threads 100000: 4 threads x 100,000 blocks of 1-64 bytes, every
 * other one freed.  MEMCHECK_SCAN=0: every block left behind counts as
 * definitely lost, which is what this case checks (the program keeps
 * them, so the scan would call them still reachable); every leaked
 * block comes from one call site in work(). */
H_CHECK(exact_counts)
{
	bool tracked = !c->run.args[1];
	uint64_t bytes = 0, live = 0, n = PER_THREAD, halves = (n + 1) / 2;
	for (uint64_t i = 0; i < n; i++) {
		bytes += i % 64 + 1;
		if (i % 2)
			live += i % 64 + 1;
	}
	H_EXPECT_U64(rec, "allocs", NTHREADS * n);
	H_EXPECT_U64(rec, "frees", NTHREADS * halves);
	H_EXPECT_U64(rec, "bytes_allocated", NTHREADS * bytes);
	H_EXPECT_U64(rec, "live_blocks", NTHREADS * (n - halves));
	if (!tracked) {
		/* MEMCHECK_TRACK=0 counts in each thread's own slot, no table */
		ck_assert_msg(h_nleaks(rec) == 0, "%s: %zu leak records, expected none", x->label,
			      h_nleaks(rec));
		return;
	}
	H_EXPECT_U64(rec, "bytes_freed", NTHREADS * (bytes - live));
	H_EXPECT_U64(rec, "live_bytes", NTHREADS * live);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", NTHREADS * (n - halves));
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", NTHREADS * live);
	ck_assert_msg(h_nleaks(rec) == 1, "%s: %zu leak records, expected 1 (work's malloc)",
		      x->label, h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "work");
}

/* Exact to the program's own figure, plus what lives beside it: the C
 * library's blocks for threads (a few hundred bytes), and where the
 * allocator brings the C++ runtime (jemalloc, tcmalloc) its emergency
 * exception pool, 72,704 bytes allocated at start-up. */
H_CHECK(peak_as_the_program_says)
{
	const char *at = strstr(x->r.out, "peak_at_least=");
	ck_assert_msg(at, "%s printed no peak: %s", x->label, x->r.out);
	uint64_t want = strtoull(at + 14, NULL, 10);
	uint64_t got = h_u64(rec, "peak_live_bytes");
	printf("note: %s: peak_live_bytes %llu, the program's %llu\n", x->label,
	       (unsigned long long)got, (unsigned long long)want);
	ck_assert_msg(got >= want && got <= want + 128 * 1024,
		      "%s: peak_live_bytes %llu, the program holds %llu at once (and the C and C++ "
		      "runtimes at most 128 KiB more)", x->label, (unsigned long long)got,
		      (unsigned long long)want);
}

/* plain_peak_exact: four threads churn, then hold their blocks at once,
 * round after round; the program reads memcheck_live_bytes while they
 * all hold, and prints the highest reading.  That is the process's
 * peak, exactly: a per-thread scheme that misses a thread's unflushed
 * bytes reads low, one that sees frees late reads high.  (The reading
 * minus the holds is the same in every round, or the program exits 1:
 * live bytes neither lost nor counted twice.) */
H_CHECK(peak_exactly_the_programs)
{
	const char *at = strstr(x->r.out, "peak=");
	ck_assert_msg(at, "%s printed no peak: %s", x->label, x->r.out);
	uint64_t want = strtoull(at + 5, NULL, 10);
	uint64_t got = h_u64(rec, "peak_live_bytes");
	ck_assert_msg(got == want, "%s: peak_live_bytes %llu, live bytes at the joint hold %llu "
		      "(%+lld)", x->label, (unsigned long long)got, (unsigned long long)want,
		      (long long)(got - want));
}
#define PEAK_EXACT(depth)                                                      \
	{ "exact peak of racing threads, stack depth " depth,                  \
	  .check = peak_exactly_the_programs, .record = "process",             \
	  .run = { .prog = "plain_peak_exact", .flags = H_PRELOAD,             \
		   .env = H_LIST("MEMCHECK_STACK_DEPTH=" depth) } }
/* plain_peak_exact realloc: the same with reallocs in the churn and
 * holds grown by realloc, so that the threads cross their peak in
 * realloc's live change (an old block's free, then the new block). */
#define PEAK_REALLOC(depth)                                                    \
	{ "exact peak of racing threads that realloc, stack depth " depth,     \
	  .check = peak_exactly_the_programs, .record = "process",             \
	  .run = { .prog = "plain_peak_exact", .args = H_LIST("realloc"),      \
		   .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_STACK_DEPTH=" depth) } }
/* plain_peak_exact solo: the first thread, which counts without a lock
 * while it is alone, crosses its peak after a second thread came and
 * holds bytes it has not told (lib/account.c, solo). */
#define PEAK_SOLO(depth)                                                       \
	{ "exact peak of the first thread once a second came, stack depth " depth, \
	  .check = peak_exactly_the_programs, .record = "process",             \
	  .run = { .prog = "plain_peak_exact", .args = H_LIST("solo"),         \
		   .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_STACK_DEPTH=" depth) } }

/* Rounds of threads under each unwinder and allocator: the C library
 * frees, outside memcheck's hooks, blocks that the unwinder's library
 * made inside them (libunwind's thread-local data, when a new thread
 * reuses a dead one's stack).  Those are neither double frees nor frees
 * of unknown pointers, and the program's own counts stay exact: the
 * program's own calls, and a few of the C library's (a thread's DTV),
 * never the unwinder's. */
#define ROUNDS 10
#define PER 500
H_CHECK(only_the_programs_frees)
{
	uint64_t own = (uint64_t)ROUNDS * NTHREADS * PER;
	ck_assert_msg(h_u64(rec, "frees") >= own && h_u64(rec, "allocs") - own < 64,
		      "%s: %s allocs, %s frees; the program made %llu of each", x->label,
		      h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "frees")),
		      (unsigned long long)own);
}
#define THREAD_ROUNDS(unwinder)                                                \
	{ "unwinders invent no frees in threads", .check = only_the_programs_frees, \
	  .run = { .prog = "plain_thread_rounds", .args = H_LIST(STR(ROUNDS), STR(PER)), \
		   .flags = H_PRELOAD, .text = "fail",                          \
		   .env = H_LIST("MEMCHECK_UNWINDER=" unwinder) },              \
	  .want = { { "double_frees", 0 }, { "invalid_frees", 0 },              \
		    { "verdict", .str = "pass" } },                              \
	  .no_err = H_LIST("double free", "never saw") }

/* Issue 14, item 2: thousands of detached threads that never allocate,
 * at most 8 alive at once (tests/prog/plain_idle_threads), then a leak
 * and exit.  The C library frees each dead thread's DTV after its key
 * destructors ran; memcheck once took a thread slot for that free which
 * nothing released, and its scan at exit read that slot's stack, long
 * unmapped: SIGSEGV in most runs under every allocator.  Three runs
 * under each allocator: each must exit 0 with the one leak reported. */
#define IDLE_THREADS                                                           \
	{ "idle detached threads",                                               \
	  .run = { .prog = "plain_idle_threads", .args = H_LIST("3000"), .flags = H_PRELOAD }, \
	  .want = { { "definitely_lost.bytes", 77 }, { "definitely_lost.blocks", 1 } } }

/* plain_main_exits: the process ended by its last thread after the main
 * thread's pthread_exit: the lost blocks named (frames read from the
 * calling thread's maps), the RSS at the end known. */
H_CHECK(named_after_the_main_thread)
{
	size_t named = 0;
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		const struct h_json *l = h_json_at(h_json_get(rec, "leaks"), i);
		const char *kind = h_str(l, "kind"), *fn = h_frame_str(rec, i, 0, "function");
		if (!kind || strcmp(kind, "definitely_lost") != 0)
			continue;
		ck_assert_msg(fn && (!strcmp(fn, "worker") || !strcmp(fn, "main")),
			      "%s: a lost block's first frame is %s, expected worker or main",
			      x->label, fn ? fn : "unnamed");
		named++;
	}
	ck_assert_msg(named == 2, "%s: %zu lost blocks named, expected 2", x->label, named);
	const struct h_json *end = h_json_get(rec, "rss_end");
	ck_assert_msg(end && end->type == HJ_NUM && end->num > 0, "%s: rss_end unknown", x->label);
}

/* plain_leak_asleep: sleepers keep a block each while they wait in
 * pause, read, futex, nanosleep or a raw futex with the address in a
 * register only, a spinner with every signal blocked keeps one in a
 * local, and each loses one, through rounds of regions on one processor
 * (the sleepers at nice 19: a stop handler there is often preempted
 * halfway).  Every round's definitely lost blocks are the lost ones
 * exactly (the program says so: "bad 0"), and so are the process's at
 * exit.  Before (lib/threads.c): the spinner's stack was not read at all
 * (its kept block definitely lost in every round), and a sleeper caught
 * inside the stop handler was taken for one that blocks the signal: its
 * kept block lost, or, read from the handler's stack pointer, a lost
 * block reachable (plain_leak_blocked under jemalloc, 1 run in 250). */
#define ASLEEP_SLEEPERS 40
#define ASLEEP_ROUNDS 15
H_CHECK(every_round_exact)
{
	ck_assert_msg(strstr(x->r.out, " bad 0\n"), "%s: %s; rounds with other leak kinds:\n%s%s",
		      x->label, h_status(&x->r), x->r.out, x->r.err);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", ASLEEP_SLEEPERS * ASLEEP_ROUNDS);
}
#define ASLEEP(vars)                                                           \
	{ "kept blocks of stopped threads reachable", .check = every_round_exact,   \
	  .record = "process",                                                  \
	  .run = { .prog = "plain_leak_asleep",                                 \
		   .args = H_LIST(STR(ASLEEP_SLEEPERS), STR(ASLEEP_ROUNDS), "1", "1"), \
		   .flags = H_PRELOAD, .env = vars } }

/* plain_thread_unstarted: threads made just before exit, pinned to the
 * maker's processor, each handed a block.  Since memcheck's pthread_create
 * (threadstart.c) passes the thread a record of its own, the program's
 * argument lay there alone until the thread ran: the blocks of threads
 * not yet run at the exit's scan were definitely lost (4 runs in 10 with
 * 8 threads, 12 in 20 with 4), where valgrind finds them still reachable
 * (the thread's descriptor holds its argument).  Ten runs under each
 * allocator, none may lose one. */
#define UNSTARTED                                                              \
	{ "threads not yet run at exit keep their arguments", .record = "process", \
	  .run = { .prog = "plain_thread_unstarted", .flags = H_PRELOAD },      \
	  .want = { { "definitely_lost.blocks", 0 }, { "possibly_lost.blocks", 0 } } }

/* The same with C11's thrd_create, which memcheck wraps too (session 40:
 * its threads start armed): the arguments kept, and two threads joined
 * first with their results as bare's (an int returned, thrd_exit's). */
#define UNSTARTED_C11                                                          \
	{ "C11 threads not yet run at exit keep their arguments", .record = "process", \
	  .run = { .prog = "plain_thread_unstarted", .args = H_LIST("8", "c11"),   \
		   .flags = H_PRELOAD },                                           \
	  .out = H_LIST("joined 42 7"),                                           \
	  .want = { { "definitely_lost.blocks", 0 }, { "possibly_lost.blocks", 0 } } }

static const struct h_case cases[] = {
	UNSTARTED, UNSTARTED, UNSTARTED, UNSTARTED, UNSTARTED,
	UNSTARTED, UNSTARTED, UNSTARTED, UNSTARTED, UNSTARTED,
	UNSTARTED_C11, UNSTARTED_C11, UNSTARTED_C11, UNSTARTED_C11, UNSTARTED_C11,
	ASLEEP(H_LIST("MEMCHECK_TEXT=none")),
	/* valgrind mode's scan is the same one: its LEAK SUMMARY too */
	{ "kept blocks of stopped threads reachable, valgrind's words",
	  .check = every_round_exact, .record = "process",
	  .run = { .prog = "plain_leak_asleep",
		   .args = H_LIST(STR(ASLEEP_SLEEPERS), STR(ASLEEP_ROUNDS), "1", "1"),
		   .flags = H_PRELOAD, .text = "summary",
		   .env = H_LIST("MEMCHECK_VALGRIND_TEXT=summary") },
	  .err_lines = { { "definitely lost: 2,780 bytes in 40 blocks", ASLEEP_ROUNDS },
			 /* and the exit's: the last round's, still kept */
			 { "still reachable: 8,780 bytes in 41 blocks", ASLEEP_ROUNDS + 1 } },
	  .err = H_LIST("definitely lost: 41,700 bytes in 600 blocks") },
	{ "the main thread leaves first", .record = "process", .check = named_after_the_main_thread,
	  .run = { .prog = "plain_main_exits", .flags = H_PRELOAD },
	  .want = { { "definitely_lost.blocks", 2 }, { "definitely_lost.bytes", 78 },
		    { "possibly_lost.blocks", 0 }, { "verdict", .str = "fail" } } },
	{ "four threads, exact counts", .record = "threads",
	  .run = { .prog = "threads", .args = H_LIST(STR(PER_THREAD)),
		   .env = H_LIST("MEMCHECK_MAX_LEAKS=5", "MEMCHECK_SCAN=0") },
	  .check = exact_counts },
	THREAD_ROUNDS("fp"), THREAD_ROUNDS("libunwind"), THREAD_ROUNDS("glibc"),
	{ "four threads, exact counts, count-only", .record = "threads", .check = exact_counts,
	  .run = { .prog = "threads", .args = H_LIST(STR(PER_THREAD), "count-only"),
		   .env = H_LIST("MEMCHECK_TRACK=0") } },
	IDLE_THREADS, IDLE_THREADS, IDLE_THREADS,
	{ "peak with a waiting main thread", .check = peak_as_the_program_says,
	  .record = "process", .run = { .prog = "plain_peak_threads", .flags = H_PRELOAD } },
	PEAK_EXACT("0"), PEAK_EXACT("16"), PEAK_SOLO("0"), PEAK_SOLO("16"),
	PEAK_REALLOC("0"), PEAK_REALLOC("16"),
	/* The threads are listed only when status says there are others:
	 * it says what is wrong itself. */
	{ "threads listed only when there are others", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "threadalone", .no_report = true } },
};

int main(void)
{
	TCase *tc = h_tcase("threads", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
