/*
 * test_programs.c - which programs the preload measures (lib/programs.c):
 * by default the programs under test, not what a test driver starts
 * around them.  Copies of tests/prog/plain_exit (which leaks) and of
 * /bin/true are placed where a build tree, an installed prefix and a
 * script's interpreter would be.  Which program is measured does not
 * depend on the allocator: glibc's alone.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* cp from to, with its mode. */
static void copy(const char *from, const char *to)
{
	struct h_run r;
	H_RUN(&r, 0, NULL, NULL, "/bin/cp", "-p", from, to);
	ck_assert_msg(r.exit_code == 0, "cp %s %s: %s", from, to, h_status(&r));
	h_run_free(&r);
}

static void mkdirs(const char *base, const char *const dirs[])
{
	mkdir(base, 0755);
	for (size_t i = 0; dirs[i]; i++)
		ck_assert_int_eq(mkdir(h_env("%s/%s", base, dirs[i]), 0755), 0);
}

/* Run prog preloaded with env (may be NULL); its exit status, and the
 * number of records it wrote. */
static int run(const char *const argv[], const char *extra, size_t *records)
{
	const char *report = h_tmppath("programs.jsonl");
	unlink(report);
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", extra,
			      NULL };
	struct h_run r;
	ck_assert(h_run(&r, argv, env, H_PRELOAD | H_EXITCODE, NULL) == 0);
	struct h_report rep;
	H_LOAD(&rep, report);
	*records = rep.n;
	int status = r.exit_code;
	h_report_free(&rep);
	h_run_free(&r);
	return status;
}

/* In a build tree, even one with lib beside bin: measured.  In a prefix
 * laid out as installed (lib, include and share beside bin, as pyenv's
 * and conda's): left out, its status its own. */
START_TEST(build_tree_measured_prefix_left_out)
{
	const char *build = h_tmppath("build"), *prefix = h_tmppath("prefix");
	mkdirs(build, (const char *const[]){ "bin", "lib", NULL });
	mkdirs(prefix, (const char *const[]){ "bin", "lib", "include", "share", NULL });
	const char *in_build = h_env("%s/bin/plain_exit", build);
	const char *in_prefix = h_env("%s/bin/plain_exit", prefix);
	copy(h_prog("plain_exit"), in_build);
	copy(h_prog("plain_exit"), in_prefix);
	size_t n;
	int st = run((const char *const[]){ in_build, "leak", NULL }, NULL, &n);
	ck_assert_msg(st == 23 && n == 1, "in a build tree: exit %d, %zu records; expected 23, 1",
		      st, n);
	st = run((const char *const[]){ in_prefix, "leak", NULL }, NULL, &n);
	ck_assert_msg(st == 0 && n == 0, "in an installed prefix: exit %d, %zu records; "
		      "expected 0, 0", st, n);
	/* widened: every program */
	st = run((const char *const[]){ in_prefix, "leak", NULL }, "MEMCHECK_PROGRAMS=*", &n);
	ck_assert_msg(st == 23 && n == 1, "MEMCHECK_PROGRAMS=*: exit %d, %zu records", st, n);
}
END_TEST

/* An interpreter started by the kernel for a #! script is left out
 * wherever it lies; started on its own, it is measured. */
START_TEST(interpreter_of_a_script_left_out)
{
	const char *tools = h_tmppath("tools");
	mkdir(tools, 0755);
	const char *interp = h_env("%s/interp", tools), *script = h_env("%s/script", tools);
	copy(h_prog("plain_exit"), interp);
	FILE *f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!%s\n", interp);
	fclose(f);
	chmod(script, 0755);
	size_t n;
	/* the kernel runs interp with the script's path as its argument:
	 * plain_exit does not know that case and exits 2 */
	int st = run((const char *const[]){ script, NULL }, NULL, &n);
	ck_assert_msg(st == 2 && n == 0, "interpreter of a script: exit %d, %zu records; "
		      "expected 2, 0", st, n);
	st = run((const char *const[]){ interp, "leak", NULL }, NULL, &n);
	ck_assert_msg(st == 23 && n == 1, "the same program on its own: exit %d, %zu records",
		      st, n);
}
END_TEST

/* Installed on the system: left out unless named. */
START_TEST(system_programs_left_out)
{
	size_t n;
	int st = run((const char *const[]){ "/bin/true", NULL }, NULL, &n);
	ck_assert_msg(st == 0 && n == 0, "/bin/true: exit %d, %zu records", st, n);
	st = run((const char *const[]){ "/bin/true", NULL }, "MEMCHECK_PROGRAMS=true", &n);
	ck_assert_msg(n == 1, "/bin/true with MEMCHECK_PROGRAMS=true: %zu records", n);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("programs", 60);
	tcase_add_test(tc, build_tree_measured_prefix_left_out);
	tcase_add_test(tc, interpreter_of_a_script_left_out);
	tcase_add_test(tc, system_programs_left_out);
	return h_run_suite(NULL);
}
