/*
 * test_junit.c - the JUnit XML of `memcheck run` and `memcheck gate`
 * (tools/views.c): it validates against Jenkins' junit-10.xsd
 * (tests/data/junit-10.xsd, with xmllint), and a leak's failure carries
 * the leak's file:line first in its message, for CI reporters to link,
 * and the top frames of its stack in its text.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *cli(void)
{
	return h_env("%s/memcheck", h_build());
}

/* xmllint --schema junit-10.xsd accepts path. */
static void expect_valid(const char *path, const char *what)
{
	const char *xsd = h_env("%s/../tests/data/junit-10.xsd", h_build());
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, "/usr/bin/xmllint", "--noout", "--schema", xsd, path);
	char *doc = h_read_file(path, NULL);
	ck_assert_msg(v.exit_code == 0, "%s: %s does not validate against junit-10.xsd (%s):\n%s\n%s",
		      what, path, h_status(&v), v.err, doc ? doc : "(no file)");
	free(doc);
	h_run_free(&v);
}

/* The line of tests/prog/plain_exit.c marked SITE leak. */
static int leak_line(void)
{
	char *src = h_read_file(h_env("%s/../tests/prog/plain_exit.c", h_build()), NULL);
	ck_assert_ptr_nonnull(src);
	int line = 1;
	for (const char *p = src; p < strstr(src, "SITE leak"); p++)
		line += *p == '\n';
	free(src);
	return line;
}

/* path's failure of the process region: the leak's site first, its
 * stack in the text. */
static void expect_leak_failure(const char *path, const char *what)
{
	char err[256];
	char *doc = h_read_file(path, NULL);
	ck_assert_ptr_nonnull(doc);
	struct h_xml *root = h_xml_parse(doc, err, sizeof err);
	ck_assert_msg(root != NULL, "%s: %s", what, err);
	const struct h_xml *fail = NULL;
	for (int s = 0; s < root->nkids && !fail; s++)
		for (int c = 0; c < root->kid[s]->nkids && !fail; c++)
			fail = h_xml_kid(root->kid[s]->kid[c], "failure");
	ck_assert_msg(fail != NULL, "%s: no <failure>:\n%s", what, doc);
	int line = leak_line();
	const char *msg = h_xml_attr(fail, "message");
	const char *want = h_env("tests/prog/plain_exit.c:%d: 40 bytes in 1 blocks definitely lost",
				 line);
	ck_assert_msg(msg && strncmp(msg, want, strlen(want)) == 0,
		      "%s: failure message \"%s\", expected it to begin \"%s\"", what,
		      msg ? msg : "(none)", want);
	ck_assert_msg(fail->text && strstr(fail->text, h_env("\n    at leak (tests/prog/plain_exit.c:%d)\n"
							   "    by main (tests/prog/plain_exit.c:",
							   line)),
		      "%s: no stack in the failure's text:\n%s", what, fail->text ? fail->text : "");
	h_xml_free(root);
	free(doc);
}

START_TEST(run_junit_validates)
{
	const char *j = h_tmppath("run.xml"), *rep = h_tmppath("run.jsonl");
	struct h_run r;
	/* a leak under two allocators, one allocator skipped, repeats */
	H_RUN(&r, 0, NULL, NULL, cli(), "run", "-a", "glibc,jemalloc,/nonexistent/libx.so",
	      "-n", "2", "--junit", j, "--report", rep, "--", h_prog("plain_exit"), "leak");
	ck_assert_msg(r.exit_code == 1, "run: %s; stderr:\n%s", h_status(&r), r.err);
	h_run_free(&r);
	expect_valid(j, "run with a leak, a skip and repeats");
	expect_leak_failure(j, "run");
	/* gate: the same from the stored report */
	H_RUN(&r, 0, NULL, NULL, cli(), "gate", "--junit", j, rep);
	ck_assert_msg(r.exit_code == 1, "gate: %s; stderr:\n%s", h_status(&r), r.err);
	h_run_free(&r);
	expect_valid(j, "gate");
	expect_leak_failure(j, "gate");
	/* a crash: the command's <error> */
	H_RUN(&r, 0, NULL, NULL, cli(), "run", "-a", "glibc", "--junit", j, "--", "/bin/sh", "-c",
	      "kill -SEGV $$");
	ck_assert_msg(r.exit_code == 3, "run, a crash: %s", h_status(&r));
	h_run_free(&r);
	expect_valid(j, "run with a crash");
	/* and a clean run */
	H_RUN(&r, 0, NULL, NULL, cli(), "run", "-a", "glibc", "--junit", j, "--", h_prog("plain_exit"),
	      "clean");
	ck_assert_msg(r.exit_code == 0, "run, clean: %s; stderr:\n%s", h_status(&r), r.err);
	h_run_free(&r);
	expect_valid(j, "a clean run");
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("junit", 60);
	tcase_add_test(tc, run_junit_validates);
	return h_run_suite(NULL);
}
