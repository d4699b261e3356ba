/*
 * test_checkfork.c - an unmodified check suite in CK_FORK mode, preloaded
 * (tests/prog/plain_check_fork.c): each forked test child's record is that test's
 * own (its baseline taken at the fork, so nothing of the runner's) and
 * carries the test's name, and check's own bookkeeping in the child (its
 * message file's stdio buffer) is suppressed by the shipped suppressions
 * (glibc.supp's stdio buffers, check.supp), never a leak of the test.
 * A suite linked with memcheck, each test in its region
 * (tests/prog/check_tcase.c), gets no record of a child's process unless
 * the child leaks outside the test's region.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* The record's "implicit" key: true for memcheck's own process region. */
static bool implicit(const struct h_json *rec)
{
	const struct h_json *v = rec ? h_json_get(rec, "implicit") : NULL;
	ck_assert_msg(v && v->type == HJ_BOOL, "no boolean \"implicit\"");
	return v->b;
}

START_TEST(each_child_is_its_test)
{
	const char *report = h_tmppath("ckfork.jsonl");
	const char *env[] = { "MEMCHECK_TEXT=none", h_env("MEMCHECK_REPORT=%s", report), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_check_fork"));
	ck_assert_msg(r.exit_code == 0, "plain_check_fork: %s\n%s%s", h_status(&r), r.out, r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	/* The runner, and one child per test, named after it. */
	ck_assert_uint_eq(rep.n, 5);
	ck_assert_uint_eq(h_record_count(&rep, "process"), 1);
	const struct h_json *runner = h_record(&rep, "process", r.pid);
	ck_assert_ptr_nonnull(runner);
	static const char *const tests[] = { "clean", "leaks_77", "keeps_64", "asserts_a_lot" };
	for (size_t i = 0; i < 4; i++) {
		ck_assert_msg(h_record_count(&rep, tests[i]) == 1, "no record named \"%s\"",
			      tests[i]);
		/* memcheck's own process region, for memcheck oom */
		ck_assert(implicit(h_record(&rep, tests[i], -1)));
	}
	ck_assert(implicit(runner));
	size_t leaking = 0, keeping = 0;
	for (size_t i = 0; i < rep.n; i++) {
		const struct h_json *rec = rep.rec[i];
		uint64_t lost = h_count(rec, "definitely_lost", "bytes");
		uint64_t reach = h_count(rec, "still_reachable", "bytes");
		/* check's message file buffer, allocated in each child when it
		 * first reports to the runner, and stdout's in the runner. */
		ck_assert_msg(h_count(rec, "suppressed", "blocks") >= 1,
			      "record %zu (pid %s): nothing suppressed", i,
			      h_fmt(h_u64(rec, "pid")));
		ck_assert_uint_eq(h_count(rec, "indirectly_lost", "bytes"), 0);
		ck_assert_uint_eq(h_count(rec, "possibly_lost", "bytes"), 0);
		if (lost) {
			ck_assert_uint_eq(lost, 77);
			ck_assert_uint_eq(h_count(rec, "definitely_lost", "blocks"), 1);
			ck_assert_str_eq(h_str(rec, "verdict"), "fail");
			ck_assert_str_eq(h_frame_str(rec, 0, 0, "function"), "leaks_77_fn");
			ck_assert_str_eq(h_str(rec, "name"), "leaks_77");
			leaking++;
		} else {
			ck_assert_msg(strcmp(h_str(rec, "verdict"), "pass") == 0,
				      "record %zu fails", i);
		}
		if (reach) {
			/* The test's own block, kept in a global: not check's. */
			ck_assert_uint_eq(reach, 64);
			ck_assert_uint_eq(h_count(rec, "still_reachable", "blocks"), 1);
			keeping++;
		}
		if (rec != runner)
			/* The child's figures start at the fork: a test that
			 * allocates one block does not inherit the runner's
			 * hundreds. */
			ck_assert_uint_lt(h_u64(rec, "allocs"), 1000);
	}
	ck_assert_uint_eq(leaking, 1);
	ck_assert_uint_eq(keeping, 1);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Linked, every test in its own region: the children's process regions
 * fold into the tests' regions, and show only where a child leaked
 * outside its test's region, named after the test. */
START_TEST(linked_suite_folds_process_regions)
{
	const char *report = h_tmppath("tcase.jsonl");
	const char *env[] = { "MEMCHECK_TEXT=none", h_env("MEMCHECK_REPORT=%s", report), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("check_tcase"));
	ck_assert_msg(r.exit_code == 1, "check_tcase: %s, expected exit 1 (leaks_41 fails)\n%s%s",
		      h_status(&r), r.out, r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	static const struct {
		const char *name;
		uint64_t lost;
		bool implicit;
	} want[] = {
		{ "clean_a", 0, false }, { "clean_b", 0, false }, { "leaks_41", 41, false },
		{ "fixture_leaks", 0, false }, { "fixture_leaks (process)", 33, true },
		{ "process", 0, true },
	};
	ck_assert_msg(rep.n == 6, "%zu records, expected 6", rep.n);
	for (size_t i = 0; i < 6; i++) {
		const struct h_json *rec = h_record(&rep, want[i].name, -1);
		ck_assert_msg(rec != NULL, "no record named \"%s\"", want[i].name);
		ck_assert_uint_eq(h_count(rec, "definitely_lost", "bytes"), want[i].lost);
		ck_assert_msg(implicit(rec) == want[i].implicit, "\"%s\": implicit %d",
			      want[i].name, implicit(rec));
	}
	/* the runner's own process region is "process", as ever */
	ck_assert_ptr_nonnull(h_record(&rep, "process", r.pid));
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("checkfork", 30);
	tcase_add_test(tc, each_child_is_its_test);
	tcase_add_test(tc, linked_suite_folds_process_regions);
	return h_run_suite(NULL);
}
