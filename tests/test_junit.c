/*
 * test_junit.c - the JUnit XML of `memcheck run` and `memcheck gate`
 * (tools/views.c): it validates against Jenkins' junit-10.xsd
 * (tests/data/junit-10.xsd, with xmllint), and a leak's failure carries
 * the leak's file:line first in its message, for CI reporters to link,
 * and the top frames of its stack in its text.
 *
 * A run whose JUnit file is checked alone is a row (its --junit file the
 * row's H_FILE).  The leak's run and the gate that reads its report are
 * one test of two H_EXEC steps: the gate reads what the run wrote.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* xmllint --schema junit-10.xsd accepts path. */
static void expect_valid(const char *path, const char *what)
{
	const char *xsd = h_env("%s/../tests/data/junit-10.xsd", h_build());
	struct h_res v;
	H_EXEC(&v, .prog = "/usr/bin/xmllint", .args = H_LIST("--noout", "--schema", xsd, path),
	       .no_report = true, .text = "");
	char *doc = h_read_file(path, NULL);
	ck_assert_msg(v.r.exit_code == 0, "%s: %s does not validate against junit-10.xsd (%s):\n%s\n%s",
		      what, path, h_status(&v.r), v.r.err, doc ? doc : "(no file)");
	free(doc);
	h_res_free(&v);
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

/* a leak under two allocators, one allocator skipped, repeats; then
 * gate: the same from the stored report */
START_TEST(run_and_gate_on_a_leak)
{
	const char *j = h_tmppath("run.xml");
	struct h_res x, g;
	H_EXEC(&x, .cli = H_LIST("run", "-a", "glibc,jemalloc,/nonexistent/libx.so", "-n", "2",
				 "--junit", j),
	       .prog = "plain_exit", .args = H_LIST("leak"), .text = "");
	h_expect_exit(&x, 1);
	expect_valid(j, "run with a leak, a skip and repeats");
	expect_leak_failure(j, "run");
	H_EXEC(&g, .cli = H_LIST("gate", "--junit", j, x.report), .text = "");
	h_expect_exit(&g, 1);
	expect_valid(j, "gate");
	expect_leak_failure(j, "gate");
	h_res_free(&g);
	h_res_free(&x);
}
END_TEST

H_CHECK(junit_valid)
{
	expect_valid(x->file, c->name);
}

/* memcheck run -a glibc --junit FILE -- PROG ARGS, MEMCHECK_TEXT unset */
#define RUN .allocators = H_ONCE, .file = "", .check = junit_valid,                  \
	.run = { .cli = H_LIST("run", "-a", "glibc", "--junit", H_FILE), .no_report = true, \
		 .text = ""

static const struct h_case cases[] = {
	/* a crash: the command's <error> */
	{ "run with a crash", RUN, .prog = "/bin/sh", .args = H_LIST("-c", "kill -SEGV $$") },
	  .exit = 3 },
	{ "a clean run", RUN, .prog = "plain_exit", .args = H_LIST("clean") } },
	/* a child's leak in a process that exited 3 on its own: a <skipped>
	 * with the leak in its text (test_cli's own_exit_views) */
	{ "a leak not counted", RUN, .prog = "cli_prog", .args = H_LIST("pass", "child-lose", "3") } },
};

int main(void)
{
	TCase *tc = h_tcase("junit", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, run_and_gate_on_a_leak);
	return h_run_suite(NULL);
}
