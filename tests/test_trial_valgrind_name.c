/*
 * test_trial_valgrind_name.c - what curl's test suite found (session
 * 31's trial of real suites): memcheck reached through a link named
 * valgrind.
 *
 * curl's runtests.pl finds valgrind by its name in PATH (as does a
 * Makefile's VALGRIND = valgrind), and probes it before it uses it:
 * `valgrind` without arguments must fail with status 1 (else it runs
 * without valgrind), and the first number of `valgrind --version`
 * chooses the option spelling (below 3: valgrind 2's --logfile=).
 * memcheck answered 2 and "memcheck 0.1.0": through a link named
 * valgrind, every one of curl's tests failed with memcheck's usage
 * error.  Under that name it now answers as valgrind 3.19, whose command
 * line it speaks, and runs the program as it does under its own name.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* A directory holding a link named valgrind to the built memcheck. */
static const char *valgrind_link(void)
{
	const char *dir = h_tmppath("vgname");
	ck_assert_msg(mkdir(dir, 0700) == 0, "cannot make %s", dir);
	const char *link = h_env("%s/valgrind", dir);
	ck_assert_msg(symlink(h_env("%s/memcheck", h_build()), link) == 0, "cannot link %s", link);
	return link;
}

START_TEST(no_program_fails_as_valgrind)
{
	const char *vg = valgrind_link();
	struct h_run r;
	ck_assert_int_eq(h_run(&r, H_LIST(vg), NULL, 0, NULL), 0);
	ck_assert_msg(r.exit_code == 1, "valgrind without arguments: %s, expected exit 1",
		      h_status(&r));
	ck_assert_msg(strstr(r.err, "valgrind: no program specified"), "stderr: %s", r.err);
	h_run_free(&r);
	/* under its own name: memcheck's usage, bad usage */
	ck_assert_int_eq(h_run(&r, H_LIST(h_env("%s/memcheck", h_build())), NULL, 0, NULL), 0);
	ck_assert_msg(r.exit_code == 2, "memcheck without arguments: %s", h_status(&r));
	h_run_free(&r);
}
END_TEST

START_TEST(version_is_the_valgrind_spoken)
{
	const char *vg = valgrind_link();
	struct h_run r;
	ck_assert_int_eq(h_run(&r, H_LIST(vg, "--version"), NULL, 0, NULL), 0);
	ck_assert_msg(r.exit_code == 0 && strncmp(r.out, "valgrind-3.", 11) == 0,
		      "valgrind --version: %s, printed \"%s\"", h_status(&r), r.out);
	ck_assert_msg(strstr(r.out, "memcheck "), "valgrind --version does not name memcheck: %s",
		      r.out);
	h_run_free(&r);
}
END_TEST

/* runtests.pl's command line, the program leaking 10 x 48 + 4096 bytes:
 * the log file has valgrind's two loss records (-q: no summary), under
 * each allocator. */
START_TEST(runs_the_program_as_valgrind)
{
	const char *vg = valgrind_link();
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		const char *log = h_tmppath("vg.log");
		struct h_run r;
		ck_assert_int_eq(h_run(&r, H_LIST(vg, "--quiet", "--leak-check=yes", "--num-callers=16",
						  h_env("--log-file=%s", log), h_prog("plain_leak_direct")),
				       so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL,
				       H_EXITCODE, NULL), 0);
		ck_assert_msg(r.exit_code == 0, "%s: %s (stderr: %s)", h_allocator_name(i),
			      h_status(&r), r.err);
		char *text = h_read_file(log, NULL);
		ck_assert_msg(text && strstr(text, "480 bytes in 10 blocks are definitely lost") &&
				      strstr(text, "4,096 bytes in 1 blocks are definitely lost"),
			      "%s: log file: %s", h_allocator_name(i), text ? text : "(none)");
		free(text);
		h_run_free(&r);
	}
}
END_TEST

/* `valgrind ./test`, the program first without an option (a
 * Makefile's $(VALGRIND) $(TEST), a CI script's `valgrind ./a.out`):
 * under the name the first word is the program, as valgrind runs it,
 * with valgrind's end in its text, its exit status the program's.  On
 * main memcheck took the word for one of its commands: "unknown command
 * '.../plain_errors'", status 2, the program never ran.  Under
 * memcheck's own name the words stay its commands. */
START_TEST(program_first_runs_as_valgrind)
{
	const char *vg = valgrind_link();
	for (int i = 0; i < H_NALLOCATORS; i++) {
		const char *so;
		if (!h_allocator(i, &so))
			continue;
		struct h_run r;
		ck_assert_int_eq(h_run(&r, H_LIST(vg, h_prog("plain_errors"), "leak", "3"),
				       so ? H_LIST(h_env("LD_PRELOAD=%s", so)) : NULL, H_EXITCODE,
				       NULL),
				 0);
		ck_assert_msg(r.exit_code == 3, "%s: %s, expected the program's exit 3 (stderr: %s)",
			      h_allocator_name(i), h_status(&r), r.err);
		ck_assert_msg(strstr(r.err, "Command: ") && strstr(r.err, "plain_errors leak 3\n") &&
				      strstr(r.err, "definitely lost: 100,000 bytes in 1 blocks") &&
				      strstr(r.err, "ERROR SUMMARY: 0 errors from 0 contexts"),
			      "%s: stderr: %s", h_allocator_name(i), r.err);
		h_run_free(&r);
	}
	struct h_run r;
	ck_assert_int_eq(h_run(&r, H_LIST(h_env("%s/memcheck", h_build()), h_prog("plain_errors")),
			       NULL, 0, NULL),
			 0);
	ck_assert_msg(r.exit_code == 2 && strstr(r.err, "unknown command"),
		      "memcheck PROGRAM: %s (stderr: %s)", h_status(&r), r.err);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("trial_valgrind_name", 120);
	tcase_add_test(tc, no_program_fails_as_valgrind);
	tcase_add_test(tc, version_is_the_valgrind_spoken);
	tcase_add_test(tc, runs_the_program_as_valgrind);
	tcase_add_test(tc, program_first_runs_as_valgrind);
	return h_run_suite(NULL);
}
