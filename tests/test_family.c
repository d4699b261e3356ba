/*
 * test_family.c - every malloc-family function, counted by valgrind's
 * rules (DESIGN.md): tests/prog/family checks the figures of each case
 * through memcheck_end() and names the wrong ones on stderr; here the
 * JSON view of the same regions is checked too.  And a failing call
 * leaves errno as the allocator does bare (tests/prog/plain_errno).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Run one case of tests/prog/family; returns its region's record. */
static const struct h_json *run_case(const char *kase, struct h_report *rep)
{
	const char *report = h_tmppath("report.jsonl");
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely lost,
	 * which is what these cases check (the programs still hold them, so
	 * the scan would call them still reachable); test_leakkinds tests the
	 * kinds. */
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_SCAN=0", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("family"), kase);
	ck_assert_msg(r.exit_code == 0,
		      "family %s: %s, expected exit 0; the program said:\n%s", kase,
		      h_status(&r), r.err);
	H_LOAD(rep, report);
	const struct h_json *rec = h_record(rep, kase, r.pid);
	ck_assert_msg(rec != NULL, "no record named \"%s\" from pid %d in %s", kase,
		      (int)r.pid, report);
	H_EXPECT_STR(rec, "allocator", "glibc");
	h_run_free(&r);
	return rec;
}

/* The figures every case checks in its JSON record. */
static void expect_heap(const struct h_json *rec, uint64_t allocs, uint64_t frees,
			uint64_t reallocs, uint64_t failed, uint64_t bytes,
			uint64_t live_blocks, uint64_t live_bytes)
{
	H_EXPECT_U64(rec, "allocs", allocs);
	H_EXPECT_U64(rec, "frees", frees);
	H_EXPECT_U64(rec, "reallocs", reallocs);
	H_EXPECT_U64(rec, "failed_allocs", failed);
	H_EXPECT_U64(rec, "bytes_allocated", bytes);
	H_EXPECT_U64(rec, "live_blocks", live_blocks);
	H_EXPECT_U64(rec, "live_bytes", live_bytes);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", live_blocks);
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", live_bytes);
	H_EXPECT_STR(rec, "verdict", live_blocks ? "fail" : "pass");
}

START_TEST(test_malloc_counts_requested_bytes_and_keeps_errno)
{
	struct h_report rep;
	const struct h_json *rec = run_case("malloc", &rep);
	expect_heap(rec, 2, 2, 0, 0, 100, 0, 0);
	H_EXPECT_U64(rec, "bytes_freed", 100);
	H_EXPECT_U64(rec, "peak_live_bytes", 100);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_malloc_size_max_fails_with_enomem)
{
	struct h_report rep;
	expect_heap(run_case("malloc_fail", &rep), 0, 0, 0, 1, 0, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_calloc_counts_product_and_overflow_fails)
{
	struct h_report rep;
	expect_heap(run_case("calloc", &rep), 1, 1, 0, 1, 120, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_realloc_is_free_plus_alloc)
{
	/* realloc(NULL,10) 1 alloc; grow to 100 and shrink to 50: 1 free +
	 * 1 alloc each; realloc(p,0) 1 free; realloc(NULL,0) 1 alloc of 0,
	 * then freed. */
	struct h_report rep;
	const struct h_json *rec = run_case("realloc", &rep);
	expect_heap(rec, 4, 4, 5, 0, 160, 0, 0);
	H_EXPECT_U64(rec, "bytes_freed", 160);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_failed_realloc_keeps_old_block_live)
{
	struct h_report rep;
	const struct h_json *rec = run_case("realloc_fail", &rep);
	expect_heap(rec, 1, 0, 1, 1, 64, 1, 64);
	ck_assert_msg(h_nleaks(rec) == 1, "realloc_fail: %zu leak records, expected 1 (the old block)",
		      h_nleaks(rec));
	/* freed later: an ordinary free */
	const struct h_json *after = h_record(&rep, "realloc_fail_free", 0);
	ck_assert_msg(after != NULL, "no record \"realloc_fail_free\"");
	expect_heap(after, 0, 1, 0, 0, 0, 0, 0);
	H_EXPECT_U64(after, "double_frees", 0);
	H_EXPECT_U64(after, "invalid_frees", 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_reallocarray_counts_and_overflow_fails)
{
	struct h_report rep;
	expect_heap(run_case("reallocarray", &rep), 2, 2, 3, 1, 240, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_free_null_counts_nothing)
{
	struct h_report rep;
	expect_heap(run_case("free_null", &rep), 0, 0, 0, 0, 0, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_posix_memalign_aligned_and_einval)
{
	struct h_report rep;
	expect_heap(run_case("posix_memalign", &rep), 2, 2, 0, 1, 110, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_aligned_alloc_aligned)
{
	struct h_report rep;
	expect_heap(run_case("aligned_alloc", &rep), 2, 2, 0, 0, 576, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_memalign_aligned)
{
	struct h_report rep;
	expect_heap(run_case("memalign", &rep), 2, 2, 0, 0, 107, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_valloc_page_aligned_counts_request)
{
	struct h_report rep;
	expect_heap(run_case("valloc", &rep), 1, 1, 0, 0, 100, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_pvalloc_counts_page_rounded_size)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	struct h_report rep;
	expect_heap(run_case("pvalloc", &rep), 2, 2, 0, 0, 3 * pg, 0, 0);
	h_report_free(&rep);
}
END_TEST

START_TEST(test_malloc_usable_size_counts_nothing)
{
	struct h_report rep;
	expect_heap(run_case("usable_size", &rep), 0, 0, 0, 0, 0, 0, 0);
	h_report_free(&rep);
}
END_TEST

static const char *const all_cases[] = {
	"malloc", "malloc_fail", "calloc", "realloc", "realloc_fail", "reallocarray",
	"free_null", "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
	"usable_size",
};

START_TEST(test_count_only_mode_same_calls_and_bytes)
{
	/* MEMCHECK_TRACK=0 takes other paths through the wrappers: the
	 * calls, bytes allocated and the net block count must not change */
	const char *kase = all_cases[_i];
	const char *env[] = { "MEMCHECK_TRACK=0", "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("family"), kase, "count-only");
	ck_assert_msg(r.exit_code == 0,
		      "family %s (MEMCHECK_TRACK=0): %s, expected exit 0; the program said:\n%s",
		      kase, h_status(&r), r.err);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 13: jemalloc has no pvalloc; memcheck's own, built on
 * jemalloc's memalign, failed a huge request with errno 0 where the
 * program bare gets glibc's pvalloc and ENOMEM.  Under each allocator,
 * tracking and counting, what each failing call leaves is what it
 * leaves bare. */
START_TEST(test_failing_calls_leave_errno_as_bare)
{
	const char *so;
	if (!h_allocator_or_skip(_i, &so, "errno case"))
		return;
	const char *argv[] = { h_prog("plain_errno"), NULL };
	struct h_run bare;
	const char *preload = so ? h_env("LD_PRELOAD=%s", so) : NULL;
	const char *benv[] = { preload, NULL };
	ck_assert(h_run(&bare, argv, so ? benv : NULL, 0, NULL) == 0);
	ck_assert_msg(bare.exit_code == 0, "plain_errno bare: %s", h_status(&bare));
	static const char *const modes[] = { "MEMCHECK_TRACK=1", "MEMCHECK_TRACK=0" };
	for (int m = 0; m < 2; m++) {
		const char *env[] = { "MEMCHECK_TEXT=none", modes[m], NULL };
		struct h_run r;
		ck_assert(h_run(&r, argv, env, H_PRELOAD, so) == 0);
		ck_assert_msg(r.exit_code == 0 && strcmp(r.out, bare.out) == 0,
			      "under %s with %s: %s;\n%s\nbare:\n%s", h_allocators[_i].name,
			      modes[m], h_status(&r), r.out, bare.out);
		h_run_free(&r);
	}
	h_run_free(&bare);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("family");
	TCase *tc = tcase_create("family");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_malloc_counts_requested_bytes_and_keeps_errno);
	tcase_add_test(tc, test_malloc_size_max_fails_with_enomem);
	tcase_add_test(tc, test_calloc_counts_product_and_overflow_fails);
	tcase_add_test(tc, test_realloc_is_free_plus_alloc);
	tcase_add_test(tc, test_failed_realloc_keeps_old_block_live);
	tcase_add_test(tc, test_reallocarray_counts_and_overflow_fails);
	tcase_add_test(tc, test_free_null_counts_nothing);
	tcase_add_test(tc, test_posix_memalign_aligned_and_einval);
	tcase_add_test(tc, test_aligned_alloc_aligned);
	tcase_add_test(tc, test_memalign_aligned);
	tcase_add_test(tc, test_valloc_page_aligned_counts_request);
	tcase_add_test(tc, test_pvalloc_counts_page_rounded_size);
	tcase_add_test(tc, test_malloc_usable_size_counts_nothing);
	tcase_add_loop_test(tc, test_count_only_mode_same_calls_and_bytes, 0,
			    (int)(sizeof all_cases / sizeof all_cases[0]));
	tcase_add_loop_test(tc, test_failing_calls_leave_errno_as_bare, 0, H_NALLOCATORS);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
