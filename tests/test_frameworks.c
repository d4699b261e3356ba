/*
 * test_frameworks.c - the glue for test frameworks, in the frameworks'
 * own output: a test that leaks fails in the console and XML output of
 * check (forked or not), cmocka, Criterion, GoogleTest, GLib's g_test,
 * CUnit, Catch2 and doctest (where they are installed), at the line that
 * allocated the block, under every allocator; a test that fails its own
 * assertion shows that failure, a skipped test stays skipped, a clean
 * one whose fixtures allocate and free passes (tests/prog/fw_*.c,
 * tests/prog/FRAMEWORK/fw_*); a test run with a cleared environment
 * (env -i) still fails on its leak (tests/prog/plain_envclear.c).
 *
 * A row a run: the framework's suite (linked with memcheck; another
 * allocator put behind it, H_LINKED), its exit status and the lines its
 * console shows; what depends on the source (the leak's line, marked
 * "SITE what" there) or on a file the run wrote (XML, JSON) is the
 * callbacks'; the files' paths are made by the rows' setups.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

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

/* The line of the site of each framework's leak, on the line that
 * shows it. */
static const char *copy_site(const char *prog_c, const char *fmt)
{
	return h_env(fmt, h_site_line(prog_c, "copy_of"));
}

/* A file the row's run writes, named in the environment (var=path) or
 * on the command line (--xml=path); its path for the callback. */
static struct {
	const char *xml, *json;
	const char *env[8], *args[4];
} files;

/* env: the row's, then NAME=a fresh path for the XML file. */
static void env_with_xml(struct h_spec *run, const char *name)
{
	size_t n = 0;
	while (run->env && run->env[n] && n < 6) {
		files.env[n] = run->env[n];
		n++;
	}
	files.xml = h_tmppath("report.xml");
	files.env[n++] = h_env("%s=%s", name, files.xml);
	files.env[n] = NULL;
	run->env = files.env;
}

/* check: CK_FORK and CK_NOFORK, each allocator; the XML log too. */
H_SETUP(check_xml)
{
	env_with_xml(run, "CK_XML_LOG_FILE_NAME");
	return true;
}

H_CHECK(check_fails_at_the_leak)
{
	int copy = h_site_line("fw_check.c", "copy_of");
	EXPECT_LINE(x->r.out, h_env("fw_check.c:%d:", copy), ":core:leaks:0: memcheck: region "
		    "\"leaks\": 6 bytes in 1 blocks definitely lost (allocated in copy_of)");
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && h_count_lines(xml, "<test result=\"failure\">") == 2 &&
		      strstr(xml, h_env("<fn>fw_check.c:%d</fn>", copy)) &&
		      strstr(xml, "memcheck: region &quot;leaks&quot;: 6 bytes"),
		      "%s: check's XML log: expected 2 failures, one at fw_check.c:%d:\n%s",
		      x->label, copy, xml ? xml : "(no file)");
	free(xml);
}

/* A block strdup() allocates: the default unwinder walks past the C
 * library to the test's own line. */
H_CHECK(strdup_leak_at_the_tests_line)
{
	EXPECT_LINE(x->r.out, h_env("fw_check.c:%d:", h_site_line("fw_check.c", "strdup")),
		    ":libc:strdup_leaks:0: memcheck: region \"strdup_leaks\": 7 bytes in 1 "
		    "blocks definitely lost (allocated in strdup_leaks_fn)");
}

H_CHECK(cmocka_fails_at_the_leak)
{
	EXPECT_LINE(x->r.err, "[   LINE   ] --- ",
		    copy_site("fw_cmocka.c", "fw_cmocka.c:%d: error: Failure!"));
}

H_SETUP(cmocka_xml)
{
	env_with_xml(run, "CMOCKA_XML_FILE");
	return true;
}

H_CHECK(cmocka_xml_fails_at_the_leak)
{
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && strstr(xml, "failures=\"2\" errors=\"0\" skipped=\"1\"") &&
		      strstr(xml, "memcheck: region \"leaks\": 30 bytes in 1 blocks "
			     "definitely lost (allocated in copy_of)") &&
		      strstr(xml, copy_site("fw_cmocka.c", "fw_cmocka.c:%d: error: Failure!")),
		      "%s: cmocka's XML:\n%s", x->label, xml ? xml : "(no file)");
	free(xml);
}

/* An option naming a fresh file (fmt has its %s), the file's path in
 * *path for the callback. */
static const char *file_option(const char **path, const char *tag, const char *fmt)
{
	*path = h_tmppath(tag);
	return h_env(fmt, *path);
}

H_SETUP(criterion_files)
{
	files.args[0] = file_option(&files.xml, "criterion.xml", "--xml=%s");
	files.args[1] = file_option(&files.json, "criterion.json", "--json=%s");
	files.args[2] = NULL;
	run->args = files.args;
	return true;
}

H_CHECK(criterion_fails_at_the_leak)
{
	EXPECT_LINE(x->r.err, copy_site("fw_criterion.c", "fw_criterion.c:%d: Assertion Failed"));
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && strstr(xml, "<testcase name=\"leaks_and_skips\" assertions=\"0\" "
				    "status=\"SKIPPED\"") &&
		      strstr(xml, copy_site("fw_criterion.c",
					    "fw_criterion.c:%d: memcheck: region 'leaks'")) &&
		      strstr(xml, "<testcase name=\"with_fixture\" assertions=\"0\" "
				  "status=\"PASSED\""),
		      "%s: Criterion's XML:\n%s", x->label, xml ? xml : "(no file)");
	free(xml);
	/* Criterion writes messages into its JSON unescaped: the leak's
	 * message must not break it */
	size_t len;
	char *j = h_read_file(files.json, &len), err[256];
	struct h_json *doc = j ? h_json_parse(j, len, err, sizeof err) : NULL;
	ck_assert_msg(doc != NULL, "%s: Criterion's JSON report does not parse: %s", x->label,
		      j ? err : "no file");
	h_json_free(doc);
	free(j);
}

/* GoogleTest: its suite is built where gtest is installed (tests.mk),
 * and must be there; its XML report beside it. */
H_SETUP(gtest_files)
{
	if (access("/usr/include/gtest/gtest.h", R_OK) != 0) {
		printf("note: gtest not installed; %s not built, its row skipped\n", run->prog);
		return false;
	}
	files.args[0] = file_option(&files.xml, "gtest.xml", "--gtest_output=xml:%s");
	files.args[1] = NULL;
	run->args = files.args;
	return true;
}

/* gtest_files' arguments, then one of 70 KiB: GoogleTest starts a
 * threadsafe death test's child with the program's arguments first and
 * its own flags after them (harden39). */
H_SETUP(gtest_long_line)
{
	static char wide[70 * 1024];
	if (!gtest_files(run, c))
		return false;
	memset(wide, 'x', sizeof wide - 1);
	files.args[1] = wide;
	files.args[2] = NULL;
	return true;
}

/* The leak fails its test at the line that allocated it, in the console
 * and the XML; the test that failed its own assertion shows its own
 * failure alone, the skipped one stays skipped, the death tests' children
 * leave no region unended. */
H_CHECK(gtest_fails_at_the_leak)
{
	EXPECT_LINE(x->r.out, copy_site("gtest/fw_gtest.cc", "fw_gtest.cc:%d: Failure"));
	ck_assert_msg(h_count_lines(x->r.out, "memcheck: region") == 1,
		      "%s: one memcheck failure expected, the leaking test's:\n%s", x->label,
		      x->r.out);
	ck_assert_msg(!strstr(x->r.err, "not ended"), "%s: a region not ended:\n%s", x->label,
		      x->r.err);
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && h_count_lines(xml, "<failure message=") == 2 &&
		      strstr(xml, copy_site("gtest/fw_gtest.cc", "fw_gtest.cc:%d&#x0A;Failed&#x0A;"
					    "memcheck: region &quot;Core.Leaks&quot;: 30 bytes in "
					    "1 blocks definitely lost")) &&
		      strstr(xml, "<testcase name=\"LeaksAndSkips\"") &&
		      strstr(xml, "result=\"skipped\""),
		      "%s: GoogleTest's XML:\n%s", x->label, xml ? xml : "(no file)");
	free(xml);
}

/* A framework's suite is built where its header is installed
 * (tests.mk): whether it is, said where not. */
static bool installed(const struct h_spec *run, const char *header, const char *framework)
{
	if (access(header, R_OK) == 0)
		return true;
	printf("note: %s not installed; %s not built, its row skipped\n", framework, run->prog);
	return false;
}

H_SETUP(glib_installed)
{
	(void)c;
	return installed(run, "/usr/include/glib-2.0/glib.h", "GLib");
}

/* The leaks fail their tests in GLib's TAP stream, at the line that
 * allocated the block; the test that failed on its own shows its own
 * failure alone; the child of g_test_trap_subprocess() that leaked
 * fails the test that started it. */
H_CHECK(glib_fails_at_the_leak)
{
	EXPECT_LINE(x->r.out, "not ok 2 /core/leaks - ",
		    copy_site("fw_site.h", "fw_site.h:%d: memcheck: region \"/core/leaks\": 30 "
			      "bytes in 1 blocks definitely lost (allocated in copy_of)"));
	EXPECT_LINE(x->r.out, "not ok 5 /fixture/leaks - ",
		    copy_site("fw_site.h", "fw_site.h:%d: memcheck: region \"/fixture/leaks\": "
			      "8 bytes in 1 blocks definitely lost (allocated in copy_of)"));
	ck_assert_msg(h_count_lines(x->r.out, "memcheck: region") == 2,
		      "%s: two memcheck failures expected, the leaking tests':\n%s", x->label,
		      x->r.out);
}

H_SETUP(cunit_installed)
{
	(void)c;
	return installed(run, "/usr/include/CUnit/CUnit.h", "CUnit");
}

/* The leaks fail their tests in CUnit's console, at the line that
 * allocated the block; the test that failed on its own shows its own
 * failure alone. */
H_CHECK(cunit_fails_at_the_leak)
{
	EXPECT_LINE(x->r.out, copy_site("fw_site.h", "fw_site.h:%d  - memcheck: region "
					"\"leaks\": 30 bytes in 1 blocks definitely lost "
					"(allocated in copy_of)"));
	EXPECT_LINE(x->r.out, copy_site("fw_site.h", "fw_site.h:%d  - memcheck: region "
					"\"fixture_leaks\": 8 bytes in 1 blocks definitely lost "
					"(allocated in copy_of)"));
	ck_assert_msg(h_count_lines(x->r.out, "memcheck: region") == 2,
		      "%s: two memcheck failures expected, the leaking tests':\n%s", x->label,
		      x->r.out);
}

H_SETUP(catch2_installed)
{
	(void)c;
	return installed(run, "/usr/include/catch2/catch.hpp", "Catch2");
}

/* Catch2's JUnit report too (-r junit -o FILE). */
H_SETUP(catch2_junit)
{
	if (!catch2_installed(run, c))
		return false;
	files.xml = h_tmppath("catch2.xml");
	files.args[0] = "-r";
	files.args[1] = "junit";
	files.args[2] = h_env("--out=%s", files.xml);
	files.args[3] = NULL;
	run->args = files.args;
	return true;
}

/* The two leaks (a test case's, a section's or subcase's) fail their
 * test cases in the framework's console, each a line with site; the
 * test case that failed a REQUIRE of its own shows that failure alone. */
static void two_leaks_at(const struct h_res *x, const char *site)
{
	ck_assert_msg(h_count_lines(x->r.out, site) == 2,
		      "%s: two failures at %s expected:\n%s", x->label, site, x->r.out);
	ck_assert_msg(h_count_lines(x->r.out, "memcheck: region") == 2,
		      "%s: two memcheck failures expected, the leaking test cases':\n%s", x->label,
		      x->r.out);
}

H_CHECK(catch2_fails_at_the_leak)
{
	two_leaks_at(x, copy_site("fw_site.h", "fw_site.h:%d: FAILED:"));
}

/* The JUnit report fails the two leaking test cases, at the leak's
 * line. */
H_CHECK(catch2_junit_fails_at_the_leak)
{
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && strstr(xml, "failures=\"3\"") &&
		      h_count_lines(xml, "<failure type=\"memcheck\">") == 2 &&
		      strstr(xml, "memcheck: region \"leaks\": 30 bytes in 1 blocks definitely lost") &&
		      strstr(xml, copy_site("fw_site.h", "fw_site.h:%d")),
		      "%s: Catch2's JUnit report:\n%s", x->label, xml ? xml : "(no file)");
	free(xml);
}

H_SETUP(doctest_installed)
{
	(void)c;
	return installed(run, "/usr/include/doctest/doctest.h", "doctest");
}

/* doctest's JUnit report too (-r=junit --out=FILE). */
H_SETUP(doctest_junit)
{
	if (!doctest_installed(run, c))
		return false;
	files.args[0] = "-r=junit";
	files.args[1] = file_option(&files.xml, "doctest.xml", "--out=%s");
	files.args[2] = NULL;
	run->args = files.args;
	return true;
}

H_CHECK(doctest_fails_at_the_leak)
{
	two_leaks_at(x, copy_site("fw_site.h", "fw_site.h:%d: ERROR: CHECK( memcheck_end() == 0 ) "
				  "is NOT correct!"));
}

/* The JUnit report fails the two leaking test cases, at the leak's
 * line. */
H_CHECK(doctest_junit_fails_at_the_leak)
{
	char *xml = h_read_file(files.xml, NULL);
	ck_assert_msg(xml && strstr(xml, "failures=\"3\"") &&
		      strstr(xml, "<failure message=\"memcheck: region &quot;leaks&quot;: 30 "
				  "bytes in 1 blocks definitely lost") &&
		      strstr(xml, "<failure message=\"memcheck: region &quot;subcases&quot;: 16 "
				  "bytes in 1 blocks definitely lost") &&
		      strstr(xml, copy_site("fw_site.h", "fw_site.h:%d:\n")),
		      "%s: doctest's JUnit report:\n%s", x->label, xml ? xml : "(no file)");
	free(xml);
}

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

/* The records of memcheck run's report, "name:verdict" each, are the
 * words of want, in any order (Criterion runs its tests in parallel
 * workers). */
static void expect_records(const struct h_res *x, const char *want)
{
	char got[512] = "";
	for (size_t k = 0; k < x->rep.n; k++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%s", k ? " " : "",
			 h_str(x->rep.rec[k], "name"), h_str(x->rep.rec[k], "verdict"));
	ck_assert_msg(!strcmp(sorted_words(got), sorted_words(want)),
		      "%s: records \"%s\", expected \"%s\"", x->label, got, want);
}

H_CHECK(cmocka_records)
{
	expect_records(x, "clean:pass leaks:fail clean:pass process:pass");
}

/* The death tests' children: the forked one judged by its process
 * region (which writes no record when it passes), the one started again
 * from the program's file a process of its own. */
H_CHECK(gtest_records)
{
	expect_records(x, "Core.Clean:pass Core.Leaks:fail WithFixture.Clean:pass "
			  "Death.Aborts:pass Death.ThreadsafeAborts:pass process:pass process:pass");
}

/* Each test's region, twice for the tests run again in a child of
 * g_test_trap_subprocess(): the parent's /trap/leaks failed on its own
 * (the child's status) and is discarded, unreported. */
H_CHECK(glib_records)
{
	expect_records(x, "/core/clean:pass /core/leaks:fail /fixture/clean:pass "
			  "/fixture/leaks:fail /trap/clean:pass /trap/clean:pass "
			  "/trap/leaks:fail process:pass");
}

/* The test that failed on its own is discarded, unreported. */
H_CHECK(cunit_records)
{
	expect_records(x, "clean:pass leaks:fail with_fixture:pass fixture_leaks:fail "
			  "process:pass");
}

/* Each run of a test case's body a region: the section test case's
 * twice, its clean section's run passing; the test case that failed on
 * its own discarded, unreported.  Names are split at spaces. */
H_CHECK(catch2_records)
{
	expect_records(x, "clean:pass leaks:fail sections:pass sections:fail with fixture:pass "
			  "process:pass");
}

/* A test case's region spans its subcases' runs; the skipped one has
 * none, the one that failed on its own is discarded, unreported. */
H_CHECK(doctest_records)
{
	expect_records(x, "clean:pass leaks:fail subcases:fail with fixture:pass process:pass");
}

H_CHECK(criterion_records)
{
	expect_records(x, "clean:pass leaks:fail param:pass with_fixture:pass param:fail "
			  "process:pass");
}

#define FW(name, ...) .run = { .prog = name, .flags = H_LINKED, __VA_ARGS__ }
/* tests/prog/plain_envclear MODE, preloaded, memcheck's exit status */
#define ENVCLEAR(mode, ...) .run = { .prog = "plain_envclear", .args = H_LIST(mode), \
				     .flags = H_PRELOAD | H_EXITCODE, ##__VA_ARGS__ }
static const struct h_case cases[] = {
	{ "check, forked", FW("fw_check", .env = H_LIST("CK_FORK=yes", "CK_RUN_CASE=core")),
	  .setup = check_xml, .exit = 1, .check = check_fails_at_the_leak,
	  .out = H_LIST("Checks: 3, Failures: 2, Errors: 0",
			":F:core:leaks_and_fails:0: the test's own failure") },
	/* CK_NOFORK: the test that failed its own assertion still gets its
	 * teardown; its leak is lost, not reachable */
	{ "check, not forked", FW("fw_check", .env = H_LIST("CK_FORK=no", "CK_RUN_CASE=core")),
	  .setup = check_xml, .exit = 1, .check = check_fails_at_the_leak,
	  .out = H_LIST("Checks: 3, Failures: 2, Errors: 0",
			":F:core:leaks_and_fails:0: the test's own failure"),
	  .want = { { "definitely_lost.bytes", 16, .rec = "leaks_and_fails" },
		    { "still_reachable.blocks", 0, .rec = "leaks_and_fails" } } },
	/* No scan: a stale copy of the address, in some stack layouts,
	 * would make the block reachable. */
	{ "check, a leak in the C library", .allocators = H_ONLY(H_GLIBC), .exit = 1,
	  FW("fw_check", .env = H_LIST("CK_RUN_CASE=libc", "MEMCHECK_SCAN=0")),
	  .check = strdup_leak_at_the_tests_line },
	/* With one frame of stack, none is the program's, and the message
	 * says so. */
	{ "check, one frame", .allocators = H_ONLY(H_GLIBC), .exit = 1,
	  FW("fw_check", .env = H_LIST("CK_RUN_CASE=libc", "MEMCHECK_SCAN=0",
				       "MEMCHECK_STACK_DEPTH=1")),
	  .out = H_LIST(":libc:strdup_leaks:0: memcheck: region \"strdup_leaks\": 7 bytes in 1 "
			"blocks definitely lost (no frame with a source line in the program's "
			"code in the leak's stack: a deeper MEMCHECK_STACK_DEPTH, or -g)") },
	/* cmocka's status: the number of failed tests */
	{ "cmocka", FW("fw_cmocka"), .exit = 2, .check = cmocka_fails_at_the_leak,
	  .err = H_LIST("[  ERROR   ] --- memcheck: region \"leaks\": 30 bytes in 1 blocks "
			"definitely lost (allocated in copy_of)", "[  PASSED  ] 2 test(s)."),
	  .out = H_LIST("[  FAILED  ] leaks", "[  FAILED  ] leaks_and_fails",
			"[  SKIPPED ] leaks_and_skips") },
	{ "cmocka, XML", FW("fw_cmocka", .env = H_LIST("CMOCKA_MESSAGE_OUTPUT=xml")),
	  .setup = cmocka_xml, .exit = 2, .check = cmocka_xml_fails_at_the_leak },
	/* leaks, leaks_and_fails and the leaking parameter fail; clean,
	 * with_fixture and the clean parameter pass; the skipped test is
	 * not counted */
	{ "Criterion", FW("fw_criterion"), .setup = criterion_files, .exit = 1,
	  .check = criterion_fails_at_the_leak,
	  .err = H_LIST("Tested: 6 | Passing: 3 | Failing: 3 | Crashing: 0",
			"memcheck: region 'leaks': 6 bytes in 1 blocks definitely lost "
			"(allocated in copy_of)",
			"memcheck: region 'param': 6 bytes in 1 blocks definitely lost "
			"(allocated in copy_of)", "[FAIL] fw::leaks_and_fails") },
	/* GoogleTest's status: 1 when a test failed */
	{ "GoogleTest", FW("fw_gtest", .env = H_LIST("GTEST_FILTER=-DeathLeaks.*")),
	  .setup = gtest_files, .exit = 1,
	  .check = gtest_fails_at_the_leak,
	  .out = H_LIST("memcheck: region \"Core.Leaks\": 30 bytes in 1 blocks definitely lost "
			"(allocated in copy_of(char const*))", "[  FAILED  ] Core.Leaks (",
			"[  FAILED  ] Core.LeaksAndFails (", "the test's own failure",
			"[  SKIPPED ] Core.LeaksAndSkips (", "[       OK ] WithFixture.Clean (",
			"[       OK ] Death.Aborts (", "[       OK ] Death.ThreadsafeAborts (",
			"[  PASSED  ] 4 tests.") },
	/* Preloaded as well (memcheck run -q, a driver's wrapper, over a
	 * linked suite): the tests' records alone, a failure reported once.
	 * The framework's leak failures are handled: the process regions
	 * around them do not report the same blocks again, and Criterion's
	 * workers, started from the runner's file, fold theirs into their
	 * test's. */
	{ "cmocka under memcheck run", .allocators = H_ONLY(H_GLIBC),
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_cmocka", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 2, .check = cmocka_records },
	{ "GoogleTest under memcheck run", .allocators = H_ONLY(H_GLIBC), .setup = gtest_files,
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_gtest", .flags = H_EXITCODE,
		   .text = "", .env = H_LIST("GTEST_FILTER=-DeathLeaks.*") },
	  .exit = 1, .check = gtest_records },
	/* Death tests whose children leak before they die, preloaded too
	 * (the children's process regions): GoogleTest printed PASSED, the
	 * children's text (the threadsafe one's in the death test's
	 * captured stderr) and an exit 23 after it, before session 37; now
	 * the two tests fail, the clean one passes.  Under mimalloc too
	 * since session 39: a clean threadsafe child (a fresh process that
	 * aborts) had 4 bytes of gtest's static set-up definitely lost
	 * there (a one-test suite's indices, side by side with its tests'
	 * vector: lib/scan.c, starts_buffer) */
	{ "GoogleTest, death tests' leaking children", .setup = gtest_files,
	  .run = { .prog = "fw_gtest", .flags = H_LINKED | H_PRELOAD | H_EXITCODE, .text = "fail",
		   .env = H_LIST("GTEST_FILTER=DeathLeaks.*") },
	  .exit = 1,
	  .out = H_LIST("fw_gtest.cc:", ": a region of it failed (a death test's child",
			"[  FAILED  ] DeathLeaks.Forked (", "[  FAILED  ] DeathLeaks.Threadsafe (",
			"[       OK ] DeathLeaks.Clean (", " 2 FAILED TESTS"),
	  .no_err = H_LIST("exit status 23 instead of 0") },
	/* The same linked only (no preload: glibc's malloc, the only one
	 * a linked memcheck reaches without one): the children had no
	 * process region, their leaks went unseen and every test passed
	 * (before session 38); now each child's region of its test's name
	 * (memcheck_begin_process) fails the test that started it */
	{ "GoogleTest linked only, death tests' leaking children", .setup = gtest_files,
	  .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fw_gtest", .flags = H_LINKED | H_EXITCODE, .text = "fail",
		   .env = H_LIST("GTEST_FILTER=DeathLeaks.*") },
	  .exit = 1,
	  .out = H_LIST("fw_gtest.cc:", ": a region of it failed (a death test's child",
			"[  FAILED  ] DeathLeaks.Forked (", "[  FAILED  ] DeathLeaks.Threadsafe (",
			"[       OK ] DeathLeaks.Clean (", " 2 FAILED TESTS"),
	  .no_err = H_LIST("exit status 23 instead of 0", "not ended") },
	/* The same with the program's own arguments over 64 KiB: gtest.h
	 * read the first 64 KiB of the command line into a buffer in the
	 * program's .bss, GoogleTest's flags lay past it, and the
	 * threadsafe child's leak went unseen (before session 39) */
	{ "GoogleTest linked only, a command line over 64 KiB", .setup = gtest_long_line,
	  .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fw_gtest", .flags = H_LINKED | H_EXITCODE, .text = "fail",
		   .env = H_LIST("GTEST_FILTER=DeathLeaks.*") },
	  .exit = 1,
	  .out = H_LIST("[  FAILED  ] DeathLeaks.Threadsafe (", " 2 FAILED TESTS") },
	/* GLib (memcheck/glib.h): a leak fails its test, named in the TAP
	 * stream (preloaded alone, GLib printed "ok" for it and the run
	 * exited 23 naming no test); g_test_run's status 1 */
	{ "GLib", FW("fw_glib"), .setup = glib_installed, .exit = 1,
	  .check = glib_fails_at_the_leak,
	  .out = H_LIST("ok 1 /core/clean", "not ok 3 /core/leaks_and_fails",
			"ok 4 /fixture/clean", "ok 6 /trap/clean", "not ok 7 /trap/leaks"),
	  .err = H_LIST("child process (/trap/leaks [", "failed unexpectedly") },
	/* the clean tests alone: GLib's own set-up is no leak, under
	 * every allocator, and nothing is said */
	{ "GLib, clean", FW("fw_glib", .env = H_LIST("FW_GLIB_CLEAN=1")),
	  .setup = glib_installed,
	  .out = H_LIST("ok 1 /core/clean", "ok 2 /fixture/clean", "ok 3 /trap/clean"),
	  .no_err = H_LIST("memcheck", "exit status") },
	{ "GLib under memcheck run", .allocators = H_ONLY(H_GLIBC), .setup = glib_installed,
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_glib", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 1, .check = glib_records },
	/* CUnit (memcheck/cunit.h): a leak fails its test, named, at its
	 * line (preloaded alone, CUnit counted it passed and the run exited
	 * 23 naming no test) */
	{ "CUnit", FW("fw_cunit"), .setup = cunit_installed, .exit = 1,
	  .check = cunit_fails_at_the_leak,
	  .out = H_LIST("Test: clean ...passed", "Test: leaks ...FAILED",
			"Test: leaks_and_fails ...FAILED", "CU_ASSERT_PTR_NULL_FATAL(p)",
			"Test: with_fixture ...passed", "Test: fixture_leaks ...FAILED") },
	{ "CUnit, clean", FW("fw_cunit", .env = H_LIST("FW_CUNIT_CLEAN=1")),
	  .setup = cunit_installed,
	  .out = H_LIST("Test: clean ...passed", "Test: with_fixture ...passed"),
	  .no_err = H_LIST("memcheck", "exit status") },
	{ "CUnit under memcheck run", .allocators = H_ONLY(H_GLIBC), .setup = cunit_installed,
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_cunit", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 1, .check = cunit_records },
	/* Catch2 (memcheck/catch2.h): a leak fails its test case, named,
	 * at its line (preloaded alone, Catch2 counted it passed and the run
	 * exited 23 naming no test); Catch2's status: the failed test
	 * cases */
	{ "Catch2", FW("fw_catch2"), .setup = catch2_installed, .exit = 3,
	  .check = catch2_fails_at_the_leak,
	  .out = H_LIST("memcheck: region \"leaks\": 30 bytes in 1 blocks definitely lost",
			"memcheck: region \"sections\": 16 bytes in 1 blocks definitely lost",
			"REQUIRE( p == nullptr )", "test cases: 5 | 2 passed | 3 failed") },
	{ "Catch2, JUnit", FW("fw_catch2"), .setup = catch2_junit, .exit = 3,
	  .check = catch2_junit_fails_at_the_leak },
	/* the clean test cases alone: nothing said, under every allocator */
	{ "Catch2, clean", FW("fw_catch2", .args = H_LIST("clean,with fixture")),
	  .setup = catch2_installed, .out = H_LIST("All tests passed (2 assertions in 2 test cases)"),
	  .no_err = H_LIST("memcheck", "exit status") },
	{ "Catch2 under memcheck run", .allocators = H_ONLY(H_GLIBC), .setup = catch2_installed,
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_catch2", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 3, .check = catch2_records },
	/* doctest (memcheck/doctest.h): a leak fails its test case, named,
	 * at its line, in the summary and the status (preloaded alone,
	 * doctest counted it passed and the run exited 23 naming no test) */
	{ "doctest", FW("fw_doctest"), .setup = doctest_installed, .exit = 1,
	  .check = doctest_fails_at_the_leak,
	  .out = H_LIST("memcheck: region \"leaks\": 30 bytes in 1 blocks definitely lost",
			"memcheck: region \"subcases\": 16 bytes in 1 blocks definitely lost",
			"REQUIRE( p == nullptr )",
			"[doctest] test cases: 5 | 2 passed | 3 failed | 1 skipped",
			"[doctest] assertions: 7 | 4 passed | 3 failed |") },
	{ "doctest, JUnit", FW("fw_doctest"), .setup = doctest_junit, .exit = 1,
	  .check = doctest_junit_fails_at_the_leak },
	{ "doctest, clean", FW("fw_doctest", .args = H_LIST("--test-case=clean,with fixture")),
	  .setup = doctest_installed,
	  .out = H_LIST("[doctest] test cases: 2 | 2 passed | 0 failed"),
	  .no_err = H_LIST("memcheck", "exit status") },
	{ "doctest under memcheck run", .allocators = H_ONLY(H_GLIBC), .setup = doctest_installed,
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_doctest", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 1, .check = doctest_records },
	/* A test run with a cleared environment (lib/execenv.c): memcheck
	 * is carried into it and its leak fails it, whether a wrapper left
	 * out of the measuring clears it (env -i), the test execs with PATH
	 * alone, or spawns a helper with nothing and ignores its status
	 * (the measured parent fails); it ran unchecked and passed before
	 * session 42, as MEMCHECK_FOLLOW_EXEC=0 still has it */
	{ "env -i", ENVCLEAR("env"), .exit = 23, .out = H_LIST("child: LD_PRELOAD set") },
	{ "execve with PATH alone", ENVCLEAR("execve"), .exit = 23,
	  .out = H_LIST("child: LD_PRELOAD set") },
	{ "posix_spawn with no environment", ENVCLEAR("spawn"), .exit = 23,
	  .out = H_LIST("child: LD_PRELOAD set", "spawn: the child's status ignored") },
	{ "env -i, MEMCHECK_FOLLOW_EXEC=0", ENVCLEAR("env", .env = H_LIST("MEMCHECK_FOLLOW_EXEC=0")),
	  .out = H_LIST("child: LD_PRELOAD unset") },
	{ "env -i under memcheck run",
	  .run = { .cli = H_LIST("run", "-q"), .prog = "plain_envclear", .args = H_LIST("env"),
		   .flags = H_EXITCODE, .text = "" },
	  .exit = 99, .out = H_LIST("child: LD_PRELOAD set") },
	{ "Criterion under memcheck run", .allocators = H_ONLY(H_GLIBC),
	  .run = { .cli = H_LIST("run", "-q"), .prog = "fw_criterion", .flags = H_EXITCODE,
		   .text = "" },
	  .exit = 1, .check = criterion_records },
};

/* A test run with a cleared environment while memcheck is preloaded
 * under another file name (a CI that ships it as lib-main.so, here a
 * symbolic link): the exec carries it as it carries libmemcheck.so, and
 * the leak fails the test.  Before, execenv.c looked for "libmemcheck"
 * in the first environment's LD_PRELOAD, found nothing to carry, and the
 * child ran unchecked: exit 0, its leak unseen (programs.c's rule had
 * the same flaw fixed in session 42).  Modes env -i, execve with PATH
 * alone and posix_spawn, under every allocator. */
START_TEST(test_envclear_preloaded_under_another_name)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *link = h_tmppath("lib-main.so"); /* another file name */
	ck_assert_int_eq(symlink(h_lib(), link), 0);
	const char *pre = so ? h_env("LD_PRELOAD=%s %s", link, so) : h_env("LD_PRELOAD=%s", link);
	static const char *const modes[] = { "env", "execve", "spawn" };
	for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
		struct h_run r;
		const char *const argv[] = { h_prog("plain_envclear"), modes[k], NULL };
		ck_assert_int_eq(h_run(&r, argv, H_LIST(pre), H_EXITCODE, NULL), 0);
		ck_assert_msg(r.exit_code == 23 && strstr(r.out, "child: LD_PRELOAD set") &&
				      strstr(r.err, "41 bytes in 1 blocks are definitely lost"),
			      "plain_envclear %s with %s under %s: %s (23, the child preloaded "
			      "and its leak expected); stdout:\n%s\nstderr:\n%s",
			      modes[k], pre, h_allocator_name(_i), h_status(&r), r.out, r.err);
		h_run_free(&r);
	}
}
END_TEST

/* A leaking test run through the wrappers drivers and scripts put in
 * front of a test (each installed, so left out of the measuring itself):
 * timeout(1), env, nice, stdbuf, sh -c with and without exec, xargs -P
 * (its status 123 where a command failed), and a driver that closes
 * descriptors 0-2 (no text can be written: the status still says it).
 * The leak fails each as it fails the bare test (measured, 6 December
 * 2026: each was right already; these rows keep it so).  Under every
 * allocator. */
START_TEST(test_wrapped_leak_fails)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *leak = h_prog("plain_exit");
	const char *sh_xargs = h_env("printf '%%s\\n' leak leak | xargs -P2 -n1 %s", leak);
	/* "@": the leaking program's path; "@x": the xargs pipeline */
	static const struct {
		const char *what;
		int exit;
		const char *argv[6];
	} ways[] = {
		{ "timeout", 23, { "/usr/bin/timeout", "60", "@", "leak", NULL } },
		{ "env", 23, { "/usr/bin/env", "@", "leak", NULL } },
		{ "nice", 23, { "/usr/bin/nice", "@", "leak", NULL } },
		{ "stdbuf", 23, { "/usr/bin/stdbuf", "-o0", "@", "leak", NULL } },
		{ "sh -c", 23, { "/bin/sh", "-c", "\"$0\" leak", "@", NULL } },
		{ "sh -c exec", 23, { "/bin/sh", "-c", "exec \"$0\" leak", "@", NULL } },
		{ "fds 0-2 closed", 23, { "/bin/sh", "-c", "exec \"$0\" leak <&- >&- 2>&-", "@", NULL } },
		{ "xargs -P2", 123, { "/bin/sh", "-c", "@x", NULL } },
	};
	for (size_t k = 0; k < sizeof ways / sizeof ways[0]; k++) {
		const char *argv[6];
		size_t n = 0;
		for (const char *const *a = ways[k].argv; *a; a++)
			argv[n++] = !strcmp(*a, "@") ? leak : !strcmp(*a, "@x") ? sh_xargs : *a;
		argv[n] = NULL;
		struct h_run r;
		ck_assert_int_eq(h_run(&r, argv, NULL, H_PRELOAD | H_EXITCODE, so), 0);
		ck_assert_msg(r.exit_code == ways[k].exit,
			      "a leaking test through %s under %s: %s (%d expected); stderr:\n%s",
			      ways[k].what, h_allocator_name(_i), h_status(&r), ways[k].exit, r.err);
		h_run_free(&r);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("frameworks", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, test_envclear_preloaded_under_another_name, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_wrapped_leak_fails, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
