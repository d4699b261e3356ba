/*
 * test_threads.c - 4 threads x 100,000 allocations in one region, half
 * of them freed; two threads exit before the region ends, two are still
 * alive (tests/prog/threads).  The figures must be exact.  And thousands
 * of short detached threads that never allocate, under every allocator
 * (tests/prog/plain_idle_threads); rounds of threads under every
 * unwinder and allocator (tests/prog/plain_thread_rounds).  The peak of
 * live bytes of threads that allocate while the main thread, holding
 * most of the memory, waits for them (tests/prog/plain_peak_threads).
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

START_TEST(test_four_threads_exact_counts)
{
	const char *report = h_tmppath("report.jsonl");
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely
	 * lost, which is what this test checks (the program keeps them,
	 * so the scan would call them still reachable). */
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_MAX_LEAKS=5", "MEMCHECK_SCAN=0", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("threads"), "100000");
	ck_assert_msg(r.exit_code == 0, "threads: %s, expected exit 0; wrong figures:\n%s",
		      h_status(&r), r.err);

	uint64_t bytes = 0, live = 0, n = PER_THREAD, halves = (n + 1) / 2;
	for (uint64_t i = 0; i < n; i++) {
		bytes += i % 64 + 1;
		if (i % 2)
			live += i % 64 + 1;
	}
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "threads", r.pid);
	ck_assert_msg(rec != NULL, "no record \"threads\"");
	H_EXPECT_U64(rec, "allocs", NTHREADS * n);
	H_EXPECT_U64(rec, "frees", NTHREADS * halves);
	H_EXPECT_U64(rec, "bytes_allocated", NTHREADS * bytes);
	H_EXPECT_U64(rec, "bytes_freed", NTHREADS * (bytes - live));
	H_EXPECT_U64(rec, "live_blocks", NTHREADS * (n - halves));
	H_EXPECT_U64(rec, "live_bytes", NTHREADS * live);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", NTHREADS * (n - halves));
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", NTHREADS * live);
	/* every leaked block comes from one call site in work() */
	ck_assert_msg(h_nleaks(rec) == 1, "%zu leak records, expected 1 (work's malloc)",
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "work");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_four_threads_exact_counts_count_only)
{
	/* MEMCHECK_TRACK=0 counts in each thread's own slot, no table */
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_TRACK=0", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("threads"), "100000", "count-only");
	ck_assert_msg(r.exit_code == 0, "threads (MEMCHECK_TRACK=0): %s, expected exit 0; "
		      "wrong figures:\n%s", h_status(&r), r.err);
	uint64_t bytes = 0, n = PER_THREAD, halves = (n + 1) / 2;
	for (uint64_t i = 0; i < n; i++)
		bytes += i % 64 + 1;
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "threads", r.pid);
	ck_assert_msg(rec != NULL, "no record \"threads\"");
	H_EXPECT_U64(rec, "allocs", NTHREADS * n);
	H_EXPECT_U64(rec, "frees", NTHREADS * halves);
	H_EXPECT_U64(rec, "bytes_allocated", NTHREADS * bytes);
	H_EXPECT_U64(rec, "live_blocks", NTHREADS * (n - halves));
	ck_assert_msg(h_nleaks(rec) == 0, "MEMCHECK_TRACK=0: %zu leak records, expected none",
		      h_nleaks(rec));
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 2: thousands of detached threads that never allocate,
 * at most 8 alive at once (tests/prog/plain_idle_threads), then a leak
 * and exit.  The C library frees each dead thread's DTV after its key
 * destructors ran; memcheck once took a thread slot for that free which
 * nothing released, and its scan at exit read that slot's stack, long
 * unmapped: SIGSEGV in most runs under every allocator.  Three runs
 * under each allocator: each must exit 0 with the one leak reported. */
static const char *const thread_allocators[] = { NULL, "libmimalloc.so.2", "libjemalloc.so.2",
						 "libtcmalloc_minimal.so.4" };

/* Exact to the program's own figure, plus what lives beside it: the C
 * library's blocks for threads (a few hundred bytes), and where the
 * allocator brings the C++ runtime (jemalloc, tcmalloc) its emergency
 * exception pool, 72,704 bytes allocated at start-up. */
START_TEST(test_peak_with_a_waiting_main_thread)
{
	const char *name = thread_allocators[_i];
	const char *so = name ? h_allocator_so(name) : NULL;
	if (name && !so) {
		printf("note: %s not installed; skipping it\n", name);
		return;
	}
	const char *report = h_tmppath("peak.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_peak_threads"));
	ck_assert_msg(r.exit_code == 0, "plain_peak_threads under %s: %s; stderr:\n%s",
		      name ? name : "glibc", h_status(&r), r.err);
	const char *at = strstr(r.out, "peak_at_least=");
	ck_assert_msg(at, "plain_peak_threads printed no peak: %s", r.out);
	uint64_t want = strtoull(at + 14, NULL, 10);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	uint64_t got = h_u64(rec, "peak_live_bytes");
	printf("note: plain_peak_threads under %s: peak_live_bytes %llu, the program's %llu\n",
	       name ? name : "glibc", (unsigned long long)got, (unsigned long long)want);
	ck_assert_msg(got >= want && got <= want + 128 * 1024,
		      "plain_peak_threads under %s: peak_live_bytes %llu, the program holds %llu at "
		      "once (and the C and C++ runtimes at most 128 KiB more)",
		      name ? name : "glibc", (unsigned long long)got, (unsigned long long)want);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_idle_detached_threads)
{
	const char *name = thread_allocators[_i];
	const char *so = name ? h_allocator_so(name) : NULL;
	if (name && !so) {
		printf("note: %s not installed; skipping it\n", name);
		return;
	}
	for (int run = 0; run < 3; run++) {
		const char *report = h_tmppath("idle.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_idle_threads"), "3000");
		ck_assert_msg(r.exit_code == 0, "plain_idle_threads under %s, run %d: %s; stderr:\n%s",
			      name ? name : "glibc", run + 1, h_status(&r), r.err);
		struct h_report rep;
		H_LOAD(&rep, report);
		const struct h_json *rec = h_record(&rep, "process", r.pid);
		ck_assert_msg(rec != NULL, "no \"process\" record");
		H_EXPECT_COUNT(rec, "definitely_lost", "bytes", 77);
		H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 1);
		h_report_free(&rep);
		h_run_free(&r);
		unlink(report);
	}
}
END_TEST

/* Rounds of threads under each unwinder and allocator: the C library
 * frees, outside memcheck's hooks, blocks that the unwinder's library
 * made inside them (libunwind's thread-local data, when a new thread
 * reuses a dead one's stack).  Those are neither double frees nor frees
 * of unknown pointers, and the program's own counts stay exact. */
static const char *const unwinders[] = { "fp", "libunwind", "glibc" };
static const char *const allocators[] = { NULL, "libmimalloc.so.2", "libjemalloc.so.2",
					  "libtcmalloc_minimal.so.4" };
#define NALLOC (sizeof allocators / sizeof allocators[0])

START_TEST(test_unwinders_invent_no_frees_in_threads)
{
	const char *unw = unwinders[(size_t)_i / NALLOC], *a = allocators[(size_t)_i % NALLOC];
	const char *so = a ? h_allocator_so(a) : NULL;
	if (a && !so) {
		printf("note: %s not installed; skipping it\n", a);
		return;
	}
	enum { ROUNDS = 10, PER = 500 };
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=fail",
			      h_env("MEMCHECK_UNWINDER=%s", unw), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_thread_rounds"), h_env("%d", ROUNDS),
	      h_env("%d", PER));
	ck_assert_msg(r.exit_code == 0, "%s, %s: %s; stderr:\n%s", unw, a ? a : "glibc",
		      h_status(&r), r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	H_EXPECT_U64(rec, "double_frees", 0);
	H_EXPECT_U64(rec, "invalid_frees", 0);
	H_EXPECT_STR(rec, "verdict", "pass");
	/* the program's own calls, and a few of the C library's (a
	 * thread's DTV): never the unwinder's */
	uint64_t own = (uint64_t)ROUNDS * NTHREADS * PER;
	ck_assert_msg(h_u64(rec, "frees") >= own && h_u64(rec, "allocs") - own < 64,
		      "%s, %s: %s allocs, %s frees; the program made %llu of each", unw,
		      a ? a : "glibc", h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "frees")),
		      (unsigned long long)own);
	ck_assert_msg(!strstr(r.err, "double free") && !strstr(r.err, "never saw"),
		      "%s, %s: heap errors reported:\n%s", unw, a ? a : "glibc", r.err);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("threads");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_four_threads_exact_counts);
	tcase_add_loop_test(tc, test_unwinders_invent_no_frees_in_threads, 0,
			    (int)(NALLOC * sizeof unwinders / sizeof unwinders[0]));
	tcase_add_test(tc, test_four_threads_exact_counts_count_only);
	tcase_add_loop_test(tc, test_idle_detached_threads, 0, 4);
	tcase_add_loop_test(tc, test_peak_with_a_waiting_main_thread, 0, 4);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
