/*
 * test_allocators.c - an unmodified program (tests/prog/plain_family, not
 * linked to memcheck) under each allocator, with libmemcheck.so preloaded
 * first: exact counts (what the allocator allocates before main, counted
 * as valgrind counts it, taken off), the allocator named, no crash.  And the wrong
 * order (allocator first) must be detected and explained.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const struct {
	const char *so;         /* NULL: glibc, nothing extra preloaded */
	const char *name;       /* expected "allocator" */
} allocs[] = {
	{ NULL, "glibc" },
	{ "libmimalloc.so.2", "mimalloc" },
	{ "libjemalloc.so.2", "jemalloc" },
	{ "libtcmalloc_minimal.so.4", "tcmalloc" },
	{ "libtcmalloc.so.4", "tcmalloc" },
};
#define NALLOCS (int)(sizeof allocs / sizeof allocs[0])

/* The allocator's path, or NULL (with a note) when it is not installed. */
static const char *allocator_or_skip(int i)
{
	const char *so = h_allocator_so(allocs[i].so);
	if (!so)
		printf("note: %s not installed; skipping it\n", allocs[i].so);
	return so;
}

/* What the process region counts for a program that does nothing under
 * so: the allocator's own start-up blocks (tests/prog/plain_empty.c). */
struct base {
	uint64_t allocs, frees, reallocs, bytes, bytes_freed, live_blocks, live_bytes;
};

static struct base baseline(const char *so, bool count_only)
{
	const char *report = h_tmppath("base.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      count_only ? "MEMCHECK_TRACK=0" : NULL, NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_empty"));
	ck_assert_msg(r.exit_code == 0, "plain_empty: %s", h_status(&r));
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "plain_empty: no process record");
	struct base b = { h_u64(rec, "allocs"), h_u64(rec, "frees"), h_u64(rec, "reallocs"),
			  h_u64(rec, "bytes_allocated"),
			  h_u64(rec, "bytes_freed"), h_u64(rec, "live_blocks"),
			  h_u64(rec, "live_bytes") };
	h_report_free(&rep);
	h_run_free(&r);
	return b;
}

START_TEST(test_family_counts_exact_under_allocator)
{
	const char *so = NULL;
	if (allocs[_i].so && !(so = allocator_or_skip(_i)))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_family"));
	ck_assert_msg(r.exit_code == 0, "plain_family under %s: %s, expected exit 0; stderr:\n%s",
		      allocs[_i].name, h_status(&r), r.err);
	/* realloc(p, 0) returns a block under some allocators (mimalloc):
	 * then that is 1 more alloc (of 0 bytes) and 1 more free. */
	uint64_t extra;
	if (strstr(r.out, "realloc0=ptr"))
		extra = 1;
	else if (strstr(r.out, "realloc0=null"))
		extra = 0;
	else
		ck_abort_msg("plain_family printed no realloc0=...: \"%s\"", r.out);

	struct base b = baseline(so, false);
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(rep.n == 1, "under %s: %zu records, expected 1 (process)", allocs[_i].name,
		      rep.n);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "under %s: no \"process\" record", allocs[_i].name);
	H_EXPECT_STR(rec, "allocator", allocs[_i].name);
	H_EXPECT_U64(rec, "allocs", b.allocs + 12 + extra);
	H_EXPECT_U64(rec, "frees", b.frees + 12 + extra);
	H_EXPECT_U64(rec, "reallocs", b.reallocs + 6);
	H_EXPECT_U64(rec, "failed_allocs", 0);
	H_EXPECT_U64(rec, "bytes_allocated", b.bytes + 10632);
	H_EXPECT_U64(rec, "bytes_freed", b.bytes_freed + 10632);
	H_EXPECT_U64(rec, "live_blocks", b.live_blocks);
	H_EXPECT_U64(rec, "live_bytes", b.live_bytes);
	H_EXPECT_U64(rec, "double_frees", 0);
	H_EXPECT_U64(rec, "invalid_frees", 0);
	H_EXPECT_STR(rec, "verdict", "pass");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_count_only_exact_under_allocator)
{
	/* MEMCHECK_TRACK=0: calls and bytes allocated still exact */
	const char *so = NULL;
	if (allocs[_i].so && !(so = allocator_or_skip(_i)))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
			      "MEMCHECK_TRACK=0", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_family"));
	ck_assert_msg(r.exit_code == 0, "plain_family (MEMCHECK_TRACK=0) under %s: %s; stderr:\n%s",
		      allocs[_i].name, h_status(&r), r.err);
	uint64_t extra = strstr(r.out, "realloc0=ptr") ? 1 : 0;
	struct base b = baseline(so, true);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "under %s: no \"process\" record", allocs[_i].name);
	H_EXPECT_STR(rec, "allocator", allocs[_i].name);
	H_EXPECT_U64(rec, "allocs", b.allocs + 12 + extra);
	H_EXPECT_U64(rec, "frees", b.frees + 12 + extra);
	H_EXPECT_U64(rec, "reallocs", b.reallocs + 6);
	H_EXPECT_U64(rec, "bytes_allocated", b.bytes + 10632);
	H_EXPECT_U64(rec, "live_blocks", b.live_blocks);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_double_free_kept_from_allocator)
{
	/* the second free would crash or abort any of them */
	const char *so = NULL;
	if (allocs[_i].so && !(so = allocator_or_skip(_i)))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_errors"), "double");
	ck_assert_msg(r.exit_code == 0 && strcmp(r.out, "continued\n") == 0,
		      "double free under %s: %s, stdout \"%s\"; expected exit 0, \"continued\"; "
		      "stderr:\n%s", allocs[_i].name, h_status(&r), r.out, r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "under %s: no \"process\" record", allocs[_i].name);
	H_EXPECT_U64(rec, "double_frees", 1);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Run plain_family MODE with the allocator BEFORE libmemcheck.so. */
static void run_wrong_order(struct h_run *r, struct h_report *rep, const char *so,
			    const char *mode)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	H_RUN(r, H_PRELOAD_AFTER, so, env, h_prog("plain_family"), mode);
	H_LOAD(rep, report);
}

START_TEST(test_wrong_preload_order_detected)
{
	/* _i: 1.. (glibc has no wrong order) */
	const char *so = allocator_or_skip(_i);
	if (!so)
		return;
	struct h_run r;
	struct h_report rep;
	run_wrong_order(&r, &rep, so, "basic");
	ck_assert_msg(r.exit_code == 0, "plain_family basic, %s first: %s, expected exit 0; "
		      "stderr:\n%s", allocs[_i].so, h_status(&r), r.err);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "%s first: no \"process\" record", allocs[_i].so);
	H_EXPECT_STR(rec, "verdict", "fail");
	ck_assert_msg(h_violation_has(rec, "bypassed"),
		      "%s first: no violation mentioning \"bypassed\"", allocs[_i].so);
	ck_assert_msg(strstr(r.err, "Put libmemcheck first") != NULL,
		      "%s first: stderr does not say to put libmemcheck first:\n%s",
		      allocs[_i].so, r.err);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Regression (fixed in f0db144): with the allocator before
 * libmemcheck.so, a call of a family function the allocator does not
 * export (jemalloc: pvalloc) finds memcheck's wrapper, which forwarded it
 * to glibc; the allocator's free() then crashed on glibc's pointer
 * (SIGSEGV under jemalloc). */
START_TEST(test_wrong_preload_order_full_family_does_not_crash)
{
	const char *so = allocator_or_skip(_i);
	if (!so)
		return;
	struct h_run r;
	struct h_report rep;
	run_wrong_order(&r, &rep, so, "full");
	ck_assert_msg(r.exit_code == 0,
		      "plain_family (pvalloc, reallocarray, ...) with %s before "
		      "libmemcheck.so: %s, expected exit 0; stderr:\n%s",
		      allocs[_i].so, h_status(&r), r.err);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Regression (fixed in f0db144): the wrong-order message named the
 * object after libmemcheck (libc.so.6) as the one that serves malloc and
 * suggested LD_PRELOAD="libmemcheck.so .../libc.so.6", and the record's
 * "allocator" said "glibc".  Both must name the allocator that is first. */
START_TEST(test_wrong_preload_order_message_names_the_allocator)
{
	const char *so = allocator_or_skip(_i);
	if (!so)
		return;
	struct h_run r;
	struct h_report rep;
	run_wrong_order(&r, &rep, so, "basic");
	ck_assert_msg(strstr(r.err, allocs[_i].so) != NULL && strstr(r.err, "libc.so") == NULL,
		      "with %s first, stderr should name it (and not libc.so.6) as "
		      "the object that serves malloc:\n%s", allocs[_i].so, r.err);
	/* and the record names the allocator the program really used */
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "%s first: no \"process\" record", allocs[_i].so);
	H_EXPECT_STR(rec, "allocator", allocs[_i].name);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("allocators");
	TCase *tc = tcase_create("allocators");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_family_counts_exact_under_allocator, 0, NALLOCS);
	tcase_add_loop_test(tc, test_count_only_exact_under_allocator, 0, NALLOCS);
	tcase_add_loop_test(tc, test_double_free_kept_from_allocator, 0, NALLOCS);
	tcase_add_loop_test(tc, test_wrong_preload_order_detected, 1, NALLOCS);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(tc, test_wrong_preload_order_full_family_does_not_crash, 1, NALLOCS);
	tcase_add_loop_test(tc, test_wrong_preload_order_message_names_the_allocator, 1, NALLOCS);
	return h_run_suite(s);
}
