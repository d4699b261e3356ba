/*
 * test_frameworks.c - the glue for test frameworks, in the frameworks'
 * own output: a test that leaks fails in the console and XML output of
 * check (forked or not), cmocka and Criterion, at the line that
 * allocated the block, under every allocator; a test that fails its own
 * assertion shows that failure, a skipped test stays skipped, a clean
 * one whose fixtures allocate and free passes (tests/prog/fw_*.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The line of tests/prog/NAME that has the comment "SITE what". */
static int site_line(const char *name, const char *what)
{
	char *src = h_read_file(h_env("%s/../tests/prog/%s", h_build(), name), NULL);
	ck_assert_msg(src != NULL, "cannot read tests/prog/%s", name);
	const char *mark = strstr(src, h_env("SITE %s */", what));
	ck_assert_msg(mark != NULL, "no SITE %s in tests/prog/%s", what, name);
	int line = 1;
	for (const char *p = src; p < mark; p++)
		line += *p == '\n';
	free(src);
	return line;
}

/* text has a line that contains every one of the NULL-terminated needles. */
static bool line_with(const char *text, const char *const needles[])
{
	for (const char *l = text; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		bool all = true;
		for (size_t i = 0; needles[i] && all; i++) {
			const char *hit = memmem(l, len, needles[i], strlen(needles[i]));
			all = hit != NULL;
		}
		if (all)
			return true;
		l = end ? end + 1 : NULL;
	}
	return false;
}

#define EXPECT_LINE(text, ...)                                                   \
	do {                                                                     \
		const char *const need_[] = { __VA_ARGS__, NULL };               \
		ck_assert_msg(line_with((text), need_), "no line with %s ... in:\n%s", \
			      need_[0], (text));                                 \
	} while (0)

/* The allocators installed, one after the other, from *a on: false
 * when there is none left.  *so: the object to preload, NULL for glibc. */
static bool each_allocator(size_t *a, const char **so)
{
	for (; *a < H_NALLOCATORS; ++*a) {
		const char *soname = h_allocators[*a].soname;
		*so = NULL;
		if (!soname || (*so = h_allocator_so(soname)))
			return true;
	}
	return false;
}

/* The preload that puts another allocator behind the linked library. */
static unsigned preload_for(const char *so)
{
	return so ? H_PRELOAD : 0;
}

/* check: CK_FORK and CK_NOFORK, each allocator; the XML log too. */
START_TEST(check_suite_fails_at_the_leak)
{
	int copy = site_line("fw_check.c", "copy_of");
	int dup = site_line("fw_check.c", "strdup");
	const char *site = h_env("fw_check.c:%d:", copy);
	const char *forks[] = { "CK_FORK=yes", "CK_FORK=no" };
	const char *so;
	for (size_t a = 0; each_allocator(&a, &so); a++) {
		for (size_t f = 0; f < 2; f++) {
			const char *xml = h_tmppath("check.xml");
			const char *report = h_tmppath("check.jsonl");
			const char *env[] = { forks[f], "MEMCHECK_TEXT=none", "CK_RUN_CASE=core",
					      h_env("CK_XML_LOG_FILE_NAME=%s", xml),
					      h_env("MEMCHECK_REPORT=%s", report), NULL };
			struct h_run r;
			/* libmemcheck first when another allocator is preloaded */
			H_RUN(&r, preload_for(so), so, env, h_prog("fw_check"));
			ck_assert_msg(r.exit_code == 1, "fw_check (%s, %s): %s, expected 1",
				      forks[f], so ? so : "glibc", h_status(&r));
			EXPECT_LINE(r.out, "Checks: 3, Failures: 2, Errors: 0");
			EXPECT_LINE(r.out, site, ":core:leaks:0: memcheck: region \"leaks\": "
				    "6 bytes in 1 blocks definitely lost (allocated in copy_of)");
			EXPECT_LINE(r.out, ":F:core:leaks_and_fails:0: the test's own failure");
			char *x = h_read_file(xml, NULL);
			ck_assert_msg(x && h_count_lines(x, "<test result=\"failure\">") == 2 &&
				      strstr(x, h_env("<fn>fw_check.c:%d</fn>", copy)) &&
				      strstr(x, "memcheck: region &quot;leaks&quot;: 6 bytes"),
				      "check's XML log: expected 2 failures, one at "
				      "fw_check.c:%d:\n%s", copy, x ? x : "(no file)");
			free(x);
			/* CK_NOFORK: the test that failed its own assertion still
			 * gets its teardown; its leak is lost, not reachable */
			struct h_report rep;
			H_LOAD(&rep, report);
			const struct h_json *lf = h_record(&rep, "leaks_and_fails", 0);
			if (f == 1) {
				ck_assert_msg(lf != NULL, "no record for leaks_and_fails (CK_NOFORK)");
				H_EXPECT_COUNT(lf, "definitely_lost", "bytes", 16);
				H_EXPECT_COUNT(lf, "still_reachable", "blocks", 0);
			}
			h_report_free(&rep);
			h_run_free(&r);
		}
	}
	/* A block strdup() allocates: the default unwinder walks past the C
	 * library to the test's own line.  With one frame of stack, none is
	 * the program's, and the message says so.  No scan: a stale copy of
	 * the address, in some stack layouts, would make the block
	 * reachable. */
	const char *fp[] = { "MEMCHECK_TEXT=none", "CK_RUN_CASE=libc", "MEMCHECK_SCAN=0", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, fp, h_prog("fw_check"));
	EXPECT_LINE(r.out, h_env("fw_check.c:%d:", dup), ":libc:strdup_leaks:0: memcheck: "
		    "region \"strdup_leaks\": 7 bytes in 1 blocks definitely lost (allocated "
		    "in strdup_leaks_fn)");
	h_run_free(&r);
	const char *one[] = { "MEMCHECK_TEXT=none", "CK_RUN_CASE=libc", "MEMCHECK_SCAN=0",
			      "MEMCHECK_STACK_DEPTH=1", NULL };
	H_RUN(&r, 0, NULL, one, h_prog("fw_check"));
	EXPECT_LINE(r.out, ":libc:strdup_leaks:0: memcheck: region \"strdup_leaks\": 7 bytes "
		    "in 1 blocks definitely lost (no frame with a source line in the program's "
		    "code in the leak's stack: a deeper MEMCHECK_STACK_DEPTH, or -g)");
	h_run_free(&r);
}
END_TEST

START_TEST(cmocka_group_fails_at_the_leak)
{
	int copy = site_line("fw_cmocka.c", "copy_of");
	const char *site = h_env("fw_cmocka.c:%d: error: Failure!", copy);
	const char *so;
	for (size_t a = 0; each_allocator(&a, &so); a++) {
		const char *xml = h_tmppath("cmocka.xml");
		const char *env[] = { "MEMCHECK_TEXT=none", NULL };
		struct h_run r;
		H_RUN(&r, preload_for(so), so, env, h_prog("fw_cmocka"));
		/* cmocka's status: the number of failed tests */
		ck_assert_msg(r.exit_code == 2, "fw_cmocka (%s): %s, expected 2; stdout:\n%s\n"
			      "stderr:\n%s", so ? so : "glibc", h_status(&r), r.out, r.err);
		EXPECT_LINE(r.err, "[  ERROR   ] --- memcheck: region \"leaks\": 30 bytes in 1 "
			    "blocks definitely lost (allocated in copy_of)");
		EXPECT_LINE(r.err, "[   LINE   ] --- ", site);
		EXPECT_LINE(r.out, "[  FAILED  ] leaks");
		EXPECT_LINE(r.out, "[  FAILED  ] leaks_and_fails");
		EXPECT_LINE(r.out, "[  SKIPPED ] leaks_and_skips");
		EXPECT_LINE(r.err, "[  PASSED  ] 2 test(s).");
		h_run_free(&r);
		const char *xenv[] = { "MEMCHECK_TEXT=none", "CMOCKA_MESSAGE_OUTPUT=xml",
				       h_env("CMOCKA_XML_FILE=%s", xml), NULL };
		H_RUN(&r, preload_for(so), so, xenv, h_prog("fw_cmocka"));
		char *x = h_read_file(xml, NULL);
		ck_assert_msg(x && strstr(x, "failures=\"2\" errors=\"0\" skipped=\"1\"") &&
			      strstr(x, "memcheck: region \"leaks\": 30 bytes in 1 blocks "
				     "definitely lost (allocated in copy_of)") && strstr(x, site),
			      "cmocka's XML (%s):\n%s", so ? so : "glibc", x ? x : "(no file)");
		free(x);
		h_run_free(&r);
	}
}
END_TEST

START_TEST(criterion_suite_fails_at_the_leak)
{
	int copy = site_line("fw_criterion.c", "copy_of");
	const char *site = h_env("fw_criterion.c:%d: Assertion Failed", copy);
	const char *so;
	for (size_t a = 0; each_allocator(&a, &so); a++) {
		const char *xml = h_tmppath("criterion.xml"), *json = h_tmppath("criterion.json");
		const char *env[] = { "MEMCHECK_TEXT=none", NULL };
		struct h_run r;
		H_RUN(&r, preload_for(so), so, env, h_prog("fw_criterion"), h_env("--xml=%s", xml),
		      h_env("--json=%s", json));
		ck_assert_msg(r.exit_code == 1, "fw_criterion (%s): %s, expected 1; stderr:\n%s",
			      so ? so : "glibc", h_status(&r), r.err);
		/* leaks, leaks_and_fails and the leaking parameter fail;
		 * clean, with_fixture and the clean parameter pass; the
		 * skipped test is not counted */
		EXPECT_LINE(r.err, "Tested: 6 | Passing: 3 | Failing: 3 | Crashing: 0");
		EXPECT_LINE(r.err, site);
		EXPECT_LINE(r.err, "memcheck: region 'leaks': 6 bytes in 1 blocks definitely "
			    "lost (allocated in copy_of)");
		EXPECT_LINE(r.err, "memcheck: region 'param': 6 bytes in 1 blocks definitely "
			    "lost (allocated in copy_of)");
		EXPECT_LINE(r.err, "[FAIL] fw::leaks_and_fails");
		char *x = h_read_file(xml, NULL);
		ck_assert_msg(x && strstr(x, "<testcase name=\"leaks_and_skips\" assertions=\"0\" "
					  "status=\"SKIPPED\"") &&
			      strstr(x, h_env("fw_criterion.c:%d: memcheck: region 'leaks'", copy)) &&
			      strstr(x, "<testcase name=\"with_fixture\" assertions=\"0\" "
					"status=\"PASSED\""),
			      "Criterion's XML (%s):\n%s", so ? so : "glibc", x ? x : "(no file)");
		free(x);
		/* Criterion writes messages into its JSON unescaped: the
		 * leak's message must not break it */
		size_t len;
		char *j = h_read_file(json, &len), err[256];
		struct h_json *doc = j ? h_json_parse(j, len, err, sizeof err) : NULL;
		ck_assert_msg(doc != NULL, "Criterion's JSON report (%s) does not parse: %s",
			      so ? so : "glibc", j ? err : "no file");
		h_json_free(doc);
		free(j);
		h_run_free(&r);
	}
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The space-separated words of s, sorted, as one string (never freed). */
static const char *sorted_words(const char *s)
{
	char *copy = strdup(s), *w[64], *save = NULL;
	size_t n = 0;
	for (char *t = strtok_r(copy, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	qsort(w, n, sizeof *w, cmp_str);
	char *out = calloc(1, strlen(s) + 2);
	for (size_t i = 0; i < n; i++)
		sprintf(out + strlen(out), "%s%s", i ? " " : "", w[i]);
	free(copy);
	return out;
}

/* Preloaded as well (memcheck run -q, a driver's wrapper, over a linked
 * suite): the tests' records alone, a failure reported once.  The
 * framework's leak failures are handled: the process regions around them
 * do not report the same blocks again, and Criterion's workers, started
 * from the runner's file, fold theirs into their test's. */
START_TEST(suites_under_memcheck_run)
{
	static const struct {
		const char *prog;
		int status;
		const char *records;    /* name:verdict, in order */
	} cases[] = {
		{ "fw_cmocka", 2, "clean:pass leaks:fail clean:pass process:pass" },
		{ "fw_criterion", 1, "clean:pass leaks:fail param:pass with_fixture:pass "
				     "param:fail process:pass" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *report = h_tmppath("run.jsonl");
		struct h_run r;
		H_RUN(&r, H_EXITCODE, NULL, NULL, h_env("%s/memcheck", h_build()), "run", "-q",
		      "--report", report, "--", h_prog(cases[i].prog));
		ck_assert_msg(r.exit_code == cases[i].status, "memcheck run -q %s: %s, expected "
			      "%d; stderr:\n%s", cases[i].prog, h_status(&r), cases[i].status, r.err);
		struct h_report rep;
		H_LOAD(&rep, report);
		char got[512] = "";
		for (size_t k = 0; k < rep.n; k++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%s",
				 k ? " " : "", h_str(rep.rec[k], "name"),
				 h_str(rep.rec[k], "verdict"));
		/* Criterion runs its tests in parallel workers: in any order */
		ck_assert_msg(!strcmp(sorted_words(got), sorted_words(cases[i].records)),
			      "memcheck run -q %s: records \"%s\", expected \"%s\"",
			      cases[i].prog, got, cases[i].records);
		h_report_free(&rep);
		h_run_free(&r);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("frameworks", 120);
	tcase_add_test(tc, check_suite_fails_at_the_leak);
	tcase_add_test(tc, cmocka_group_fails_at_the_leak);
	tcase_add_test(tc, criterion_suite_fails_at_the_leak);
	tcase_add_test(tc, suites_under_memcheck_run);
	return h_run_suite(NULL);
}
