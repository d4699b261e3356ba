/*
 * test_exitcode.c - MEMCHECK_EXITCODE: a process in which a region failed
 * exits 23 where it would exit 0, under every allocator; any other
 * status stays the program's, and so does every status of a program
 * memcheck leaves out (tests/prog/plain_exit.c, tests/prog/exitregion.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* What every run of plain_exit must show besides its status: the
 * buffered "out" flushed first, each record failed when the status was
 * changed to 23, and that change said on stderr exactly then. */
H_CHECK(plain_exit_said)
{
	ck_assert_msg(strncmp(x->r.out, "out", 3) == 0, "%s: stdout \"%s\", expected it to begin "
		      "with the buffered \"out\"", x->label, x->r.out);
	for (size_t i = 0; i < x->rep.n; i++)
		if (c->exit == 23)
			H_EXPECT_STR(x->rep.rec[i], "verdict", "fail");
	bool said = strstr(x->r.err, "exit status 23 instead of 0") != NULL;
	ck_assert_msg(said == (c->exit == 23), "%s: the change of status %s; stderr:\n%s",
		      x->label, said ? "said where there was none" : "not said", x->r.err);
}

/* The alarm's _exit: the report and its status (23), or the line that
 * says why there is none and the program's 0; never a signal. */
H_CHECK(alarm_exit)
{
	bool skipped = strstr(x->r.err, "not reported") != NULL;
	ck_assert_msg(x->r.exit_code == (skipped ? 0 : 23), "%s: %s; stderr:\n%s", x->label,
		      h_status(&x->r), x->r.err);
	ck_assert_msg(skipped || x->rep.n == 1, "%s: %zu records", x->label, x->rep.n);
}

/* Each record says the status the program itself exited with (the
 * report's exit_status): the tool's own N, its parent's 0. */
H_CHECK(expect_fail_records)
{
	ck_assert_msg(x->rep.n == 2, "%s: %zu records; stderr:\n%s", x->label, x->rep.n, x->r.err);
	unsigned long n = strtoul(c->run.args[1], NULL, 10);
	size_t tool = 0, parent = 0;
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *r = x->rep.rec[i];
		uint64_t st = h_u64(r, "exit_status");
		if (h_count(r, "definitely_lost", "bytes") != 0) {
			tool++;
			H_EXPECT_U64(r, "exit_status", n);
			H_EXPECT_STR(r, "verdict", "fail");
		} else {
			parent++;
			ck_assert_msg(st == 0, "%s: the parent's exit_status %s", x->label, h_fmt(st));
			H_EXPECT_STR(r, "verdict", "pass");
		}
	}
	ck_assert_msg(tool == 1 && parent == 1, "%s: %zu leaking records, %zu clean", x->label,
		      tool, parent);
}

/* plain_exit CASE [ARG] preloaded under each allocator installed. */
#define PLAIN_EXIT(...)                                                        \
	.run = { .prog = "plain_exit", .args = H_LIST(__VA_ARGS__),            \
		 .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },             \
	.check = plain_exit_said

/* exitregion CASE, linked with libmemcheck.so or libmemcheck.a.  No
 * scan: the block the region leaves is lost whatever registers still
 * hold its address (test_leakkinds tests the kinds). */
#define EXITREGION(program, what)                                                 \
	.run = { .prog = program, .args = H_LIST(what), .flags = H_EXITCODE,      \
		 .env = H_LIST("MEMCHECK_SCAN=0"), .no_report = true },        \
	.allocators = H_ONLY(H_GLIBC)

static const struct h_case cases[] = {
	{ "a leak fails a process that exits 0", PLAIN_EXIT("leak"), .exit = 23, .records = 1 },
	{ "a clean process keeps its 0", PLAIN_EXIT("clean"), .exit = 0, .records = 1 },
	/* leaked in an exit handler of the program's: still reported */
	{ "leak in an exit handler", PLAIN_EXIT("leak-atexit"), .exit = 23, .records = 1 },
	{ "other statuses pass through", PLAIN_EXIT("leak-status", "77"), .exit = 77, .records = 1 },
	{ "other statuses pass through", PLAIN_EXIT("leak-status", "99"), .exit = 99, .records = 1 },
	{ "other statuses pass through", PLAIN_EXIT("leak-status", "1"), .exit = 1, .records = 1 },
	/* _exit runs no exit handler: memcheck's _exit reports there, as
	 * valgrind does, with exit's rule for the status */
	{ "_exit", PLAIN_EXIT("leak-_exit"), .exit = 23, .records = 1 },
	{ "_exit keeps another status", PLAIN_EXIT("leak-_exit", "3"), .exit = 3, .records = 1 },
	{ "_exit from a SIGABRT handler", PLAIN_EXIT("leak-abort"), .exit = 23, .records = 1 },
	/* a handler's _exit that may interrupt memcheck or the allocator
	 * (their locks held): reported, or said not to be; never a hang */
	{ "_exit from a SIGALRM handler amid mallocs",
	  .run = { .prog = "plain_exit", .args = H_LIST("alarm", "300"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .exit = H_EXIT_ANY, .check = alarm_exit },
	{ "MEMCHECK_EXITCODE=0",
	  .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD | H_EXITCODE,
		   .text = "fail", .env = H_LIST("MEMCHECK_EXITCODE=0") },
	  .check = plain_exit_said, .exit = 0, .records = 1 },
	{ "MEMCHECK_EXITCODE=5",
	  .run = { .prog = "plain_exit", .args = H_LIST("leak"), .flags = H_PRELOAD | H_EXITCODE,
		   .env = H_LIST("MEMCHECK_EXITCODE=5"), .no_report = true },
	  .allocators = H_ONLY(H_GLIBC), .exit = 5 },
	/* A destructor of the program's calls exit(0): glibc never returns
	 * to the dynamic linker's destructor walk, and memcheck's destructor
	 * never runs.  Its exit handler reports the process and fails it. */
	{ "exit from a destructor", PLAIN_EXIT("leak-dtor"), .exit = 23, .records = 1 },
	/* The child's leak fails the child, and the parent too, which
	 * exits 0 after it saw the child's 23 (MEMCHECK_ANCESTORS,
	 * descend.c: a parent may ignore the status; test_descend.c) */
	{ "a forked child fails, and so its parent",
	  .run = { .prog = "plain_exit", .args = H_LIST("fork"), .flags = H_PRELOAD | H_EXITCODE,
		   .no_report = true },
	  .allocators = H_ONLY(H_GLIBC), .exit = 23, .out = H_LIST("child=23") },
	/* MEMCHECK_ANCESTORS=0: the child's leak fails the child only. */
	{ "a forked child fails alone",
	  .run = { .prog = "plain_exit", .args = H_LIST("fork"), .flags = H_PRELOAD | H_EXITCODE,
		   .no_report = true, .env = H_LIST("MEMCHECK_ANCESTORS=0") },
	  .allocators = H_ONLY(H_GLIBC), .exit = 0, .out = H_LIST("child=23") },
	/* A tool that rejects bad input on purpose and leaks on that path,
	 * its parent a test that expects the rejection (wayland's scanner
	 * test): the tool keeps its status and its failure goes no further
	 * (lib/exitstatus.c's rule); the parent, measured, passes, as bare
	 * (23 before session 48: the tool's failure reached it) */
	{ "a tool fails on purpose and leaks: its parent, which expects it, passes",
	  .run = { .prog = "plain_exit", .args = H_LIST("expect-fail", "3"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .exit = 0, .out = H_LIST("child=3"), .check = expect_fail_records },
	/* the same tool exits 0 leaking: 23, which its parent takes for the
	 * rejection it expects; the leak still fails the parent */
	{ "a tool expected to fail leaks and exits 0: its parent fails",
	  .run = { .prog = "plain_exit", .args = H_LIST("expect-fail", "0"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .exit = 23, .out = H_LIST("child=23"), .check = expect_fail_records },
	/* A forked child's _exit: its heap is the parent's copy (check's
	 * forked tests leave so): not reported, its status its own. */
	{ "a forked child's _exit",
	  .run = { .prog = "plain_exit", .args = H_LIST("fork-_exit"),
		   .flags = H_PRELOAD | H_EXITCODE, .text = "fail" },
	  .exit = 0, .out = H_LIST("child=0"), .records = 1 },
	/* An unmodified check suite, preloaded: its forked test that leaks
	 * exits 23, which fails that test in check's own output, and only
	 * it. */
	{ "a check test that leaks fails",
	  .run = { .prog = "plain_check_fork", .flags = H_PRELOAD | H_EXITCODE, .no_report = true },
	  .allocators = H_ONLY(H_GLIBC), .exit = 1,
	  .out = H_LIST("75%: Checks: 4, Failures: 0, Errors: 1",
			":E:core:leaks_77:0: (after this point) Early exit with return value 23") },
	/* Explicit regions, linked with libmemcheck.so and with libmemcheck.a. */
	{ "explicit regions", EXITREGION("exitregion", "pass"), .exit = 0 },
	{ "explicit regions", EXITREGION("exitregion", "fail"), .exit = 23 },
	{ "explicit regions", EXITREGION("exitregion", "handled"), .exit = 0 },
	{ "explicit regions", EXITREGION("exitregion", "some"), .exit = 23 },
	{ "explicit regions", EXITREGION("exitregion", "status"), .exit = 7 },
	{ "explicit regions", EXITREGION("exitregion_static", "pass"), .exit = 0 },
	{ "explicit regions", EXITREGION("exitregion_static", "fail"), .exit = 23 },
	{ "explicit regions", EXITREGION("exitregion_static", "handled"), .exit = 0 },
	{ "explicit regions", EXITREGION("exitregion_static", "some"), .exit = 23 },
	{ "explicit regions", EXITREGION("exitregion_static", "status"), .exit = 7 },
};

/* A program memcheck leaves out keeps its status: /bin/sh runs a
 * leaking program under test and exits with its own status, 0. */
START_TEST(programs_left_out_keep_their_status)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s leak; echo \" status=$?\"; grep -q x /dev/null; "
		 "expr 1 + 1 >/dev/null; exit 0", h_prog("plain_exit"));
	struct h_res x;
	H_EXEC(&x, .prog = "/bin/sh", .args = H_LIST("-c", cmd), .flags = H_PRELOAD | H_EXITCODE,
	       .no_report = true);
	h_expect_exit(&x, 0);
	ck_assert_msg(strstr(x.r.out, "out status=23") != NULL, "sh: \"%s\"", x.r.out);
	h_res_free(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("exitcode", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, programs_left_out_keep_their_status);
	return h_run_suite(NULL);
}
