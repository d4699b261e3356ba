/*
 * test_exitcode.c - MEMCHECK_EXITCODE: a process in which a region failed
 * exits 23 where it would exit 0, under every allocator; any other
 * status stays the program's, and so does every status of a program
 * memcheck leaves out (tests/prog/plain_exit.c, tests/prog/exitregion.c).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const allocators[] = {
	NULL, "libmimalloc.so.2", "libjemalloc.so.2", "libtcmalloc_minimal.so.4",
};

/* Run plain_exit CASE [ARG] preloaded under each allocator installed;
 * every run must exit want with "out" flushed, and leave records
 * records (a process record with a leak when records > 0). */
static void expect_plain(const char *what, const char *arg, const char *const extra[],
			 int want, size_t records)
{
	for (size_t a = 0; a < N(allocators); a++) {
		const char *so = allocators[a] ? h_allocator_so(allocators[a]) : NULL;
		if (allocators[a] && !so)
			continue;
		const char *report = h_tmppath("exit.jsonl");
		const char *env[8] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=fail" };
		size_t ne = 2;
		for (size_t i = 0; extra && extra[i]; i++)
			env[ne++] = extra[i];
		env[ne] = NULL;
		struct h_run r;
		if (arg)
			H_RUN(&r, H_PRELOAD | H_EXITCODE, so, env, h_prog("plain_exit"), what, arg);
		else
			H_RUN(&r, H_PRELOAD | H_EXITCODE, so, env, h_prog("plain_exit"), what);
		const char *name = allocators[a] ? allocators[a] : "glibc";
		ck_assert_msg(r.exit_code == want, "plain_exit %s under %s: %s, expected exit %d; "
			      "stderr:\n%s", what, name, h_status(&r), want, r.err);
		ck_assert_msg(strncmp(r.out, "out", 3) == 0, "plain_exit %s under %s: stdout "
			      "\"%s\", expected it to begin with the buffered \"out\"", what,
			      name, r.out);
		struct h_report rep;
		H_LOAD(&rep, report);
		ck_assert_msg(rep.n == records, "plain_exit %s under %s: %zu records, expected "
			      "%zu; stderr:\n%s", what, name, rep.n, records, r.err);
		for (size_t i = 0; i < rep.n; i++)
			if (want == 23)
				H_EXPECT_STR(rep.rec[i], "verdict", "fail");
		bool said = strstr(r.err, "exit status 23 instead of 0") != NULL;
		ck_assert_msg(said == (want == 23), "plain_exit %s under %s: the change of "
			      "status %s; stderr:\n%s", what, name,
			      said ? "said where there was none" : "not said", r.err);
		h_report_free(&rep);
		h_run_free(&r);
	}
}

START_TEST(leak_fails_a_process_that_exits_0)
{
	expect_plain("leak", NULL, NULL, 23, 1);
	expect_plain("clean", NULL, NULL, 0, 1);
	/* leaked in an exit handler of the program's: still reported */
	expect_plain("leak-atexit", NULL, NULL, 23, 1);
}
END_TEST

START_TEST(other_statuses_pass_through)
{
	expect_plain("leak-status", "77", NULL, 77, 1);
	expect_plain("leak-status", "99", NULL, 99, 1);
	expect_plain("leak-status", "1", NULL, 1, 1);
	/* _exit runs no handler: no report, the program's status */
	expect_plain("leak-_exit", NULL, NULL, 0, 0);
}
END_TEST

START_TEST(exitcode_is_configurable)
{
	const char *zero[] = { "MEMCHECK_EXITCODE=0", NULL };
	expect_plain("leak", NULL, zero, 0, 1);
	const char *five[] = { "MEMCHECK_EXITCODE=5", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD | H_EXITCODE, NULL, five, h_prog("plain_exit"), "leak");
	ck_assert_msg(r.exit_code == 5, "MEMCHECK_EXITCODE=5: %s", h_status(&r));
	h_run_free(&r);
}
END_TEST

/* A destructor of the program's calls exit(0): glibc never returns to
 * the dynamic linker's destructor walk, and memcheck's destructor never
 * runs.  Its exit handler reports the process and fails it. */
START_TEST(exit_from_a_destructor)
{
	expect_plain("leak-dtor", NULL, NULL, 23, 1);
}
END_TEST

/* The child's leak fails the child only. */
START_TEST(forked_child_fails_alone)
{
	const char *env[] = { "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD | H_EXITCODE, NULL, env, h_prog("plain_exit"), "fork");
	ck_assert_msg(r.exit_code == 0, "plain_exit fork: %s, expected the clean parent's 0",
		      h_status(&r));
	ck_assert_msg(strstr(r.out, "child=23") != NULL, "plain_exit fork: \"%s\", expected "
		      "the leaking child to exit 23", r.out);
	h_run_free(&r);
}
END_TEST

/* An unmodified check suite, preloaded: its forked test that leaks exits
 * 23, which fails that test in check's own output, and only it. */
START_TEST(check_test_that_leaks_fails)
{
	const char *env[] = { "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD | H_EXITCODE, NULL, env, h_prog("plain_check_fork"));
	ck_assert_msg(r.exit_code == 1, "plain_check_fork: %s; stdout:\n%s", h_status(&r), r.out);
	ck_assert_msg(strstr(r.out, "75%: Checks: 4, Failures: 0, Errors: 1") &&
		      strstr(r.out, ":E:core:leaks_77:0: (after this point) Early exit with "
				    "return value 23"),
		      "plain_check_fork: check's output:\n%s", r.out);
	h_run_free(&r);
}
END_TEST

/* A program memcheck leaves out keeps its status: /bin/sh runs a
 * leaking program under test and exits with its own status, 0. */
START_TEST(programs_left_out_keep_their_status)
{
	struct h_run r;
	const char *env[] = { "MEMCHECK_TEXT=none", NULL };
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s leak; echo \" status=$?\"; grep -q x /dev/null; "
		 "expr 1 + 1 >/dev/null; exit 0", h_prog("plain_exit"));
	H_RUN(&r, H_PRELOAD | H_EXITCODE, NULL, env, "/bin/sh", "-c", cmd);
	ck_assert_msg(r.exit_code == 0, "sh: %s", h_status(&r));
	ck_assert_msg(strstr(r.out, "out status=23") != NULL, "sh: \"%s\"", r.out);
	h_run_free(&r);
}
END_TEST

/* Explicit regions, linked with libmemcheck.so and with libmemcheck.a. */
START_TEST(explicit_regions)
{
	static const struct {
		const char *what;
		int want;
	} cases[] = {
		{ "pass", 0 }, { "fail", 23 }, { "handled", 0 }, { "some", 23 }, { "status", 7 },
	};
	const char *progs[] = { "exitregion", "exitregion_static" };
	/* No scan: the block the region leaves is lost whatever registers
	 * still hold its address (test_leakkinds tests the kinds). */
	const char *env[] = { "MEMCHECK_TEXT=none", "MEMCHECK_SCAN=0", NULL };
	for (size_t p = 0; p < 2; p++)
		for (size_t i = 0; i < N(cases); i++) {
			struct h_run r;
			H_RUN(&r, H_EXITCODE, NULL, env, h_prog(progs[p]), cases[i].what);
			ck_assert_msg(r.exit_code == cases[i].want, "%s %s: %s, expected exit %d; "
				      "stderr:\n%s", progs[p], cases[i].what, h_status(&r),
				      cases[i].want, r.err);
			h_run_free(&r);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exitcode");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, leak_fails_a_process_that_exits_0);
	tcase_add_test(tc, other_statuses_pass_through);
	tcase_add_test(tc, exitcode_is_configurable);
	tcase_add_test(tc, exit_from_a_destructor);
	tcase_add_test(tc, forked_child_fails_alone);
	tcase_add_test(tc, check_test_that_leaks_fails);
	tcase_add_test(tc, programs_left_out_keep_their_status);
	tcase_add_test(tc, explicit_regions);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
