/*
 * test_audit25b.c - what libxml2's CTest suite and Criterion suites
 * under memcheck/criterion.h found (session 25's audit of real suites).
 *
 * memcheck_end(&r) called from a frame made after the code under test
 * returned (check's teardown, the cmocka and Criterion glues): r, the
 * caller's uninitialized stack, held a stale copy of a leaked block's
 * address, and the scan that ends the region took it for a reference.
 * A Criterion test leaking malloc(40) under memcheck/criterion.h passed
 * or was called possibly lost in about half the runs, by the addresses
 * the allocator reused (tests/prog/audit25b_stale_result puts the copy
 * there on purpose).  The block must be definitely lost.
 *
 * iconv_open of four character sets (tests/prog/plain_audit25b_gconv):
 * glibc keeps each conversion module's record in a tsearch tree whose
 * pointers carry a colour bit, and libxml2's runtest failed under
 * memcheck with 114 bytes possibly lost that valgrind frees at exit
 * (__libc_freeres).  The shipped glibc.supp must match them.
 *
 * A Criterion worker ended from inside its test (cr_skip_test, exit())
 * under the preload (tests/prog/plain_audit25b_criterion): the message
 * it sent last, still queued, was possibly lost and failed its record
 * (a skip with a message; valgrind reports it too), and what Criterion's
 * start-up made through libgit2 and nanomsg was still reachable, 20
 * records that CTest's memory check (--show-reachable=yes) counted as
 * defects of the test.  The shipped criterion.supp must match them.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* The runner and its four workers: each passes, with nothing possibly
 * lost or still reachable left unsuppressed. */
H_CHECK(criterion_workers_clean)
{
	ck_assert_msg(x->rep.n == 5, "%s: %zu records, expected 5", x->label, x->rep.n);
	for (size_t k = 0; k < x->rep.n; k++) {
		const struct h_json *r = x->rep.rec[k];
		const char *verdict = h_str(r, "verdict");
		ck_assert_msg(verdict && !strcmp(verdict, "pass") &&
			      h_count(r, "possibly_lost", "blocks") == 0 &&
			      h_count(r, "still_reachable", "blocks") == 0,
			      "%s: record %zu (pid %s): %s, %s blocks possibly lost, %s still "
			      "reachable", x->label, k, h_fmt(h_u64(r, "pid")), verdict,
			      h_fmt(h_count(r, "possibly_lost", "blocks")),
			      h_fmt(h_count(r, "still_reachable", "blocks")));
	}
}

static const struct h_case cases[] = {
	{ "memcheck_end's struct, stale stack: the leak is lost",
	  .run = { .prog = "audit25b_stale_result", .no_report = true },
	  .stdout_is = "definitely lost 40 in 1, reachable 0, pass 0\n" },
	{ "glibc's conversion modules kept: suppressed",
	  .run = { .prog = "plain_audit25b_gconv", .flags = H_PRELOAD | H_EXITCODE },
	  .record = "process", .stdout_is = "converted\n",
	  .want = { { "possibly_lost.blocks", 0 }, { "verdict", .str = "pass" } } },
	{ "Criterion workers ended inside their tests: Criterion's own suppressed",
	  .run = { .prog = "plain_audit25b_criterion", .flags = H_PRELOAD | H_EXITCODE },
	  .check = criterion_workers_clean },
};

int main(void)
{
	TCase *tc = h_tcase("audit25b", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
