/*
 * test_programs.c - which programs the preload measures (lib/programs.c):
 * by default the programs under test, not what a test driver starts
 * around them.  Copies of tests/prog/plain_exit (which leaks) and of
 * /bin/true are placed where a build tree, an installed prefix and a
 * script's interpreter would be: each row's setup makes its copy, then
 * the row says the exit status (23 when measured, the leak failing it;
 * the program's own when left out) and how many records it wrote.
 * Which program is measured does not depend on the allocator: glibc's
 * alone.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* cp from to, with its mode. */
static void copy(const char *from, const char *to)
{
	struct h_res x;
	H_EXEC(&x, .prog = "/bin/cp", .args = H_LIST("-p", from, to), .no_report = true,
	       .text = "");
	h_expect_exit(&x, 0);
	h_res_free(&x);
}

/* A fresh directory with subdirectories dirs (NULL-terminated) and
 * plain_exit copied into its bin/; the copy's path. */
static const char *tree_with_copy(const char *tag, const char *const dirs[])
{
	const char *base = h_tmppath(tag);
	ck_assert_int_eq(mkdir(base, 0755), 0);
	for (size_t i = 0; dirs[i]; i++)
		ck_assert_int_eq(mkdir(h_env("%s/%s", base, dirs[i]), 0755), 0);
	const char *prog = h_env("%s/bin/plain_exit", base);
	copy(h_prog("plain_exit"), prog);
	return prog;
}

/* In a build tree, even one with lib beside bin. */
H_SETUP(in_build_tree)
{
	run->prog = tree_with_copy("build", H_LIST("bin", "lib"));
	return true;
}

/* In a prefix laid out as installed (lib, include and share beside bin,
 * as pyenv's and conda's). */
H_SETUP(in_prefix)
{
	run->prog = tree_with_copy("prefix", H_LIST("bin", "lib", "include", "share"));
	return true;
}

/* A #! script whose interpreter is a copy of plain_exit (run->prog the
 * script), or that interpreter on its own (run->prog the copy: the
 * row's args say which). */
H_SETUP(script_and_interpreter)
{
	const char *tools = h_tmppath("tools");
	ck_assert_int_eq(mkdir(tools, 0755), 0);
	const char *interp = h_env("%s/interp", tools), *script = h_env("%s/script", tools);
	copy(h_prog("plain_exit"), interp);
	FILE *f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!%s\n", interp);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(script, 0755), 0);
	run->prog = run->args ? interp : script;
	return true;
}

/* The same, both started by a path relative to their directory, which
 * the case's process makes its working directory first: the kernel
 * names the file so in AT_EXECFN, and memcheck tells the executable
 * from a script by the working directory's path (lib/programs.c). */
H_SETUP(script_and_interpreter_relative)
{
	ck_assert(script_and_interpreter(run, c));
	char *tools = strdup(run->prog);
	ck_assert_ptr_nonnull(tools);
	*strrchr(tools, '/') = 0;
	ck_assert_int_eq(chdir(tools), 0);
	free(tools);
	run->prog = run->args ? "./interp" : "./script";
	return true;
}

#define PROGRAMS(...) .allocators = H_ONLY(H_GLIBC), .run = { .flags = H_PRELOAD | H_EXITCODE, __VA_ARGS__ }
static const struct h_case cases[] = {
	/* a build tree: measured */
	{ "in a build tree", PROGRAMS(.args = H_LIST("leak")), .setup = in_build_tree,
	  .exit = 23, .records = 1 },
	/* an installed prefix: left out, its status its own */
	{ "in an installed prefix", PROGRAMS(.args = H_LIST("leak")), .setup = in_prefix,
	  .exit = 0, .records = H_NO_RECORDS },
	/* widened: every program */
	{ "in a prefix, MEMCHECK_PROGRAMS=*",
	  PROGRAMS(.args = H_LIST("leak"), .env = H_LIST("MEMCHECK_PROGRAMS=*")),
	  .setup = in_prefix, .exit = 23, .records = 1 },
	/* An interpreter started by the kernel for a #! script is left out
	 * wherever it lies: the kernel runs it with the script's path as
	 * its argument, which plain_exit does not know (exit 2). */
	{ "interpreter of a script", PROGRAMS(), .setup = script_and_interpreter,
	  .exit = 2, .records = H_NO_RECORDS },
	/* started on its own, the same program is measured */
	{ "the interpreter on its own", PROGRAMS(.args = H_LIST("leak")),
	  .setup = script_and_interpreter, .exit = 23, .records = 1 },
	/* the two by relative paths, as a test driver starts them */
	{ "interpreter of a script, relative", PROGRAMS(),
	  .setup = script_and_interpreter_relative, .exit = 2, .records = H_NO_RECORDS },
	{ "the interpreter on its own, relative", PROGRAMS(.args = H_LIST("leak")),
	  .setup = script_and_interpreter_relative, .exit = 23, .records = 1 },
	/* installed on the system: left out unless named */
	{ "/bin/true", PROGRAMS(.prog = "/bin/true"), .exit = 0, .records = H_NO_RECORDS },
	{ "/bin/true named", PROGRAMS(.prog = "/bin/true", .env = H_LIST("MEMCHECK_PROGRAMS=true")),
	  .exit = 0, .records = 1 },
};

/* libmemcheck preloaded under another file name (a CI that ships a
 * copy as lib-main.so) measures the program as under its own: the
 * default MEMCHECK_PROCESS=auto finds it in LD_PRELOAD by the name it
 * was loaded from.  Before, the leaking program exited 0 with no word
 * (the rule looked for "libmemcheck" in LD_PRELOAD).  Under every
 * allocator, preloaded after the copy; and the copy named by a bare
 * file name found through LD_LIBRARY_PATH, as ld.so(8) allows. */
START_TEST(test_preloaded_under_another_name)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *dir = h_tmppath("renamed");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	const char *copy_path = h_env("%s/lib-main.so", dir);
	copy(h_lib(), copy_path);
	const char *const preloads[] = { copy_path, "lib-main.so" };
	for (size_t k = 0; k < 2; k++) {
		const char *pre = so ? h_env("LD_PRELOAD=%s %s", preloads[k], so) :
				       h_env("LD_PRELOAD=%s", preloads[k]);
		struct h_run r;
		const char *const argv[] = { h_prog("plain_exit"), "leak", NULL };
		ck_assert_int_eq(h_run(&r, argv, H_LIST(pre, h_env("LD_LIBRARY_PATH=%s", dir)),
				       H_EXITCODE, NULL), 0);
		ck_assert_msg(r.exit_code == 23 && strstr(r.err, "definitely lost"),
			      "plain_exit leak with %s under %s: %s (23 and the leak's record "
			      "expected); stderr:\n%s", pre, h_allocator_name(_i), h_status(&r),
			      r.err);
		h_run_free(&r);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("programs", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, test_preloaded_under_another_name, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
