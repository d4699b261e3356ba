/*
 * test_harness.c - the harness's own JSON and XML readers and output
 * parsers, so that a passing whole-program test means what it says.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static struct h_json *parse(const char *s)
{
	char err[160];
	return h_json_parse(s, strlen(s), err, sizeof err);
}

static const char *const good[] = {
	"{}", "[]", " {\"a\":1} ", "{\"a\":[1,2,{\"b\":null}],\"c\":\"x\\\"y\\\\z\\u00e9\\ud83d\\ude00\"}",
	"0", "-1.5e3", "true", "false", "null", "\"\\/\\b\\f\\n\\r\\t\"", "18446744073709551615",
	"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
};

static const char *const bad[] = {
	"", "{", "{}}", "{} x", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{a:1}", "01", "1.", "-",
	"1e", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"a\tb\"", "tru", "nul",
	"{\"a\":1}{\"b\":2}", "[1 2]", "{\"a\":1,\"a\":2}", "{\"a\":1}\n{}",
	"\"\xff\"", "\"caf\xc3\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"",
};

START_TEST(test_json_accepts_valid)
{
	struct h_json *v = parse(good[_i]);
	ck_assert_msg(v != NULL, "rejected valid JSON: %s", good[_i]);
	h_json_free(v);
}
END_TEST

START_TEST(test_json_rejects_invalid)
{
	struct h_json *v = parse(bad[_i]);
	ck_assert_msg(v == NULL, "accepted invalid JSON: \"%s\"", bad[_i]);
}
END_TEST

START_TEST(test_json_getters)
{
	struct h_json *v = parse("{\"name\":\"t\",\"pid\":42,\"x\":null,\"f\":1.5,"
				 "\"definitely_lost\":{\"blocks\":3,\"bytes\":300},"
				 "\"violations\":[\"a b\",\"c\"],"
				 "\"leaks\":[{\"blocks\":1,\"bytes\":8,\"stack\":[{\"function\":\"f\","
				 "\"file\":\"x.c\",\"line\":12},{\"function\":\"g\",\"file\":null,"
				 "\"line\":null}]}]}");
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(h_str(v, "name"), "t");
	ck_assert_uint_eq(h_u64(v, "pid"), 42);
	ck_assert_uint_eq(h_u64(v, "x"), H_NULL);
	ck_assert_uint_eq(h_u64(v, "f"), H_MISSING);
	ck_assert_uint_eq(h_u64(v, "nope"), H_MISSING);
	ck_assert_uint_eq(h_count(v, "definitely_lost", "bytes"), 300);
	ck_assert_uint_eq(h_nviolations(v), 2);
	ck_assert(h_violation_has(v, "a b"));
	ck_assert(!h_violation_has(v, "zz"));
	ck_assert_uint_eq(h_nleaks(v), 1);
	ck_assert_uint_eq(h_leak_u64(v, 0, "bytes"), 8);
	ck_assert_uint_eq(h_leak_depth(v, 0), 2);
	ck_assert_str_eq(h_frame_str(v, 0, 0, "function"), "f");
	ck_assert_str_eq(h_frame_str(v, 0, 0, "file"), "x.c");
	ck_assert_int_eq(h_frame_line(v, 0, 0), 12);
	ck_assert_ptr_null(h_frame_str(v, 0, 1, "file"));
	ck_assert_int_eq(h_frame_line(v, 0, 1), -1);
	ck_assert_ptr_null(h_frame_str(v, 0, 2, "function"));
	h_json_free(v);
}
END_TEST

/* The XML reader that checks memcheck's JUnit files: what it must take,
 * and what it must refuse. */
START_TEST(test_xml_reads_elements_attributes_and_text)
{
	char err[256];
	struct h_xml *root = h_xml_parse("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
					 "<a x=\"1 &amp; 2\" y='&lt;&#65;&#x42;'>"
					 "t\xc3\xa9 &quot;<b/><c k=\"v\">in</c></a>\n",
					 err, sizeof err);
	ck_assert_msg(root != NULL, "rejected: %s", err);
	ck_assert_str_eq(root->name, "a");
	ck_assert_str_eq(h_xml_attr(root, "x"), "1 & 2");
	ck_assert_str_eq(h_xml_attr(root, "y"), "<AB");
	ck_assert_ptr_null(h_xml_attr(root, "z"));
	ck_assert_str_eq(root->text, "t\xc3\xa9 \"");
	ck_assert_int_eq(root->nkids, 2);
	ck_assert(h_xml_kid(root, "b") && !h_xml_kid(root, "b")->nkids);
	ck_assert_str_eq(h_xml_kid(root, "c")->text, "in");
	ck_assert_str_eq(h_xml_attr(h_xml_kid(root, "c"), "k"), "v");
	ck_assert_ptr_null(h_xml_kid(root, "d"));
	h_xml_free(root);
}
END_TEST

static const char *const bad_xml[] = {
	"<a><b></a></b>", "<a x=1/>", "<a x=\"1\" x=\"2\"/>", "<a>&nbsp;</a>",
	"<a>x < y</a>", "<a/><b/>", "<a>\x01</a>", "<a", "<a>]]></a>",
	"<a x=\"<\"/>", "<a>&#0;</a>", "<a>\xff</a>", "<a><!-- c --></a>", "",
};

START_TEST(test_xml_rejects_invalid)
{
	char err[256] = "";
	struct h_xml *e = h_xml_parse(bad_xml[_i], err, sizeof err);
	ck_assert_msg(e == NULL, "accepted invalid XML: %s", bad_xml[_i]);
	ck_assert_msg(err[0], "no reason given for %s", bad_xml[_i]);
}
END_TEST

START_TEST(test_report_load_checks_every_line)
{
	const char *path = h_tmppath("r.jsonl");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	const char *text = "{\"name\":\"a\",\"pid\":1}\n{\"name\":\"b\",\"pid\":2}\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	struct h_report rep;
	ck_assert_msg(h_report_load(path, &rep) == 0, "%s", rep.error);
	ck_assert_uint_eq(rep.n, 2);
	ck_assert_ptr_nonnull(h_record(&rep, "b", 2));
	ck_assert_ptr_null(h_record(&rep, "b", 1));
	h_report_free(&rep);

	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, "{\"name\":\"c\"} junk\n", 18), 18);
	close(fd);
	ck_assert_msg(h_report_load(path, &rep) == -1, "a line with trailing garbage was accepted");
	ck_assert_msg(strstr(rep.error, ":3:") != NULL, "error should name line 3: %s", rep.error);

	/* a missing file is an empty report */
	ck_assert_int_eq(h_report_load(h_tmppath("none.jsonl"), &rep), 0);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

START_TEST(test_valgrind_heap_usage_with_commas)
{
	uint64_t a, f, b;
	ck_assert(h_valgrind_heap_usage("==1==   total heap usage: 1,234 allocs, 1,000 frees, "
					"12,345,678 bytes allocated\n", &a, &f, &b));
	ck_assert_uint_eq(a, 1234);
	ck_assert_uint_eq(f, 1000);
	ck_assert_uint_eq(b, 12345678);
	ck_assert(!h_valgrind_heap_usage("no summary here", &a, &f, &b));
}
END_TEST

START_TEST(test_run_captures_status_and_output)
{
	struct h_run r;
	const char *env[] = { "H_TEST_VAR=hello", NULL };
	H_RUN(&r, 0, NULL, env, "/bin/sh", "-c",
	      "echo out; echo err >&2; echo \"$H_TEST_VAR${MEMCHECK_BUILD:-unset}\"; exit 7");
	ck_assert_int_eq(r.exit_code, 7);
	ck_assert_str_eq(r.out, "out\nhellounset\n");
	ck_assert_str_eq(r.err, "err\n");
	h_run_free(&r);
	H_RUN(&r, 0, NULL, NULL, "/bin/sh", "-c", "kill -9 $$");
	ck_assert_int_eq(r.signal, 9);
	ck_assert_int_eq(r.exit_code, -1);
	h_run_free(&r);
	setenv("H_TIMEOUT", "0.2", 1);
	H_RUN(&r, 0, NULL, NULL, "/bin/sleep", "10");
	unsetenv("H_TIMEOUT");
	ck_assert(r.timed_out);
	ck_assert_msg(strstr(h_status(&r), "timed out") != NULL, "%s", h_status(&r));
	h_run_free(&r);
}
END_TEST

/* h_exec: the program's status, output, report and record, and a label
 * that names the run. */
START_TEST(test_exec_runs_and_reads_the_report)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD,
	       .env = H_LIST("MEMCHECK_TEXT=fail"));
	h_expect_exit(&x, 0);
	ck_assert_str_eq(x.label, "plain_exit clean under glibc with MEMCHECK_TEXT=fail");
	ck_assert_str_eq(x.r.out, "out");
	ck_assert_uint_eq(x.rep.n, 1);
	H_EXPECT_STR(h_rec(&x, "process"), "verdict", "pass");
	h_res_free(&x);
}
END_TEST

/* A row fails when the run is not what it expects, each field on its
 * own: the rows run in a suite of their own, in a process of their own,
 * and every wrong row, and only those, must fail. */
static const struct h_case wrong_rows[] = {
	{ "status", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .exit = 3 },
	{ "record count", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .records = 2 },
	{ "no records", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .records = H_NO_RECORDS },
	{ "stdout", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .out = H_LIST("out", "not printed") },
	{ "stderr", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .err = H_LIST("not printed") },
	{ "no stderr", .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD,
				.text = "fail" },
	  .allocators = H_ONLY(H_GLIBC), .no_err = H_LIST("definitely lost") },
	{ "record", .run = { .prog = "plain_exit", .args = H_LIST("clean"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .record = "no such region" },
	{ "figure", .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .want = { { "definitely_lost.bytes", 41 } } },
	{ "string", .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD },
	  .allocators = H_ONLY(H_GLIBC), .want = { { "verdict", .str = "pass" } } },
};
static const struct h_case right_rows[] = {
	{ "all right", .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD,
				.text = "fail" },
	  .allocators = H_ONLY(H_GLIBC), .exit = 0, .records = 1, .out = H_LIST("out"),
	  .err = H_LIST("definitely lost"), .no_err = H_LIST("double free"),
	  .want = { { "definitely_lost.bytes", 40 }, { "verdict", .str = "fail" },
		    { "allocator", .str = "glibc", .rec = "process" } } },
};

START_TEST(test_table_rows_fail_when_they_should)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		Suite *s = suite_create("rows");
		TCase *tc = tcase_create("rows");
		H_ADD_CASES(tc, wrong_rows);
		H_ADD_CASES(tc, right_rows);
		suite_add_tcase(s, tc);
		SRunner *sr = srunner_create(s);
		srunner_run_all(sr, CK_SILENT);
		int n = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
		_exit(n == (int)(sizeof wrong_rows / sizeof wrong_rows[0]) + 1 ? failed : 99);
	}
	int st;
	ck_assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	ck_assert_msg(WEXITSTATUS(st) == (int)(sizeof wrong_rows / sizeof wrong_rows[0]),
		      "%d of the rows failed (99: not all ran), expected the %zu wrong ones",
		      WEXITSTATUS(st), sizeof wrong_rows / sizeof wrong_rows[0]);
}
END_TEST

/* h_tmppath's names were the pid and a count in the suite's one
 * directory: a test process whose pid an earlier one of the suite had
 * (pid_max 32768 here: a loaded suite wraps it) got that one's names,
 * and its report, not removed till the suite's end, already held the
 * earlier run's records: "4 records, expected 2" (test_fatal's stall
 * rows, twice in ~10 loaded runs, session 43).  A child of this test
 * makes a file at its name; one more is forked at the same pid (the
 * kernel's next pid set back, where this user may: else skipped), whose
 * name must be another. */
START_TEST(test_tmppath_unique_when_a_pid_comes_back)
{
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	pid_t a = fork();
	if (a == 0) {
		const char *p = h_tmppath("report.jsonl");
		int f = open(p, O_CREAT | O_WRONLY, 0600);
		_exit(f < 0 || write(fd[1], p, strlen(p)) != (ssize_t)strlen(p));
	}
	close(fd[1]);
	char first[4096] = "";
	ck_assert_int_gt(read(fd[0], first, sizeof first - 1), 0);
	close(fd[0]);
	int st;
	ck_assert_int_eq(waitpid(a, &st, 0), a);
	ck_assert_int_eq(st, 0);
	for (int tries = 0; tries < 50; tries++) {
		FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!last || fprintf(last, "%d", (int)a - 1) < 0 || fclose(last) != 0) {
			printf("note: the next pid cannot be set here; skipping\n");
			return;
		}
		pid_t b = fork();
		if (b == 0)
			_exit(getpid() == a && access(h_tmppath("report.jsonl"), F_OK) == 0);
		ck_assert_int_eq(waitpid(b, &st, 0), b);
		if (b != a)
			continue; /* another process took it first */
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "pid %d came back and got %s, its first life's file, again", (int)a,
			      first);
		return;
	}
	printf("note: pid %d never came back; skipping\n", (int)a);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("harness", 30);
	tcase_add_loop_test(tc, test_json_accepts_valid, 0, (int)(sizeof good / sizeof good[0]));
	tcase_add_loop_test(tc, test_json_rejects_invalid, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_json_getters);
	tcase_add_test(tc, test_xml_reads_elements_attributes_and_text);
	tcase_add_loop_test(tc, test_xml_rejects_invalid, 0,
			    (int)(sizeof bad_xml / sizeof bad_xml[0]));
	tcase_add_test(tc, test_report_load_checks_every_line);
	tcase_add_test(tc, test_valgrind_heap_usage_with_commas);
	tcase_add_test(tc, test_run_captures_status_and_output);
	tcase_add_test(tc, test_exec_runs_and_reads_the_report);
	tcase_add_test(tc, test_table_rows_fail_when_they_should);
	tcase_add_test(tc, test_tmppath_unique_when_a_pid_comes_back);
	return h_run_suite(NULL);
}
