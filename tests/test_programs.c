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
#include <stdbool.h>
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

/* The directory levels up from path (a fresh string); chdir there when
 * go. */
static char *dir_up(const char *path, int levels, bool go)
{
	char *dir = strdup(path);
	ck_assert_ptr_nonnull(dir);
	while (levels--)
		*strrchr(dir, '/') = 0;
	if (go)
		ck_assert_int_eq(chdir(dir), 0);
	return dir;
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
	free(dir_up(run->prog, 1, true));
	run->prog = run->args ? "./interp" : "./script";
	return true;
}

/* A link to plain_exit's copy in a build tree, placed in an installed
 * prefix's bin: the executable is the build tree's (/proc/self/exe
 * resolves the link), so it is measured; memcheck's look at AT_EXECFN
 * (lib/programs.c's execfn_verdict) stops at the link and asks /proc. */
H_SETUP(link_in_prefix)
{
	const char *target = tree_with_copy("linked", H_LIST("bin", NULL));
	const char *prefix = h_tmppath("prefix");
	ck_assert_int_eq(mkdir(prefix, 0755), 0);
	static const char *const dirs[] = { "bin", "lib", "include", "share" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		ck_assert_int_eq(mkdir(h_env("%s/%s", prefix, dirs[i]), 0755), 0);
	run->prog = h_env("%s/bin/link", prefix);
	ck_assert_int_eq(symlink(target, run->prog), 0);
	return true;
}

/* An installed prefix whose bin is a link to a build tree's directory,
 * plain_exit's copy run through it: the executable is the build tree's,
 * so it is measured; the link lies on the walk, not at its end, where
 * O_NOFOLLOW would not see it: lib/programs.c's no_link_on_walk asks
 * each directory (on main at a51f2faf openat2's RESOLVE_NO_SYMLINKS did;
 * a walk that asked none left the program out). */
H_SETUP(dir_link_in_prefix)
{
	const char *target = tree_with_copy("dirlinked", H_LIST("bin", NULL));
	const char *prefix = h_tmppath("prefix");
	ck_assert_int_eq(mkdir(prefix, 0755), 0);
	static const char *const dirs[] = { "lib", "include", "share" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		ck_assert_int_eq(mkdir(h_env("%s/%s", prefix, dirs[i]), 0755), 0);
	char *bin = dir_up(target, 1, false);
	ck_assert_int_eq(symlink(bin, h_env("%s/bin", prefix)), 0);
	free(bin);
	run->prog = h_env("%s/bin/plain_exit", prefix);
	return true;
}

/* The same, its absolute path run from the prefix: memcheck asks only
 * the directories below the working directory (getcwd's path has no
 * link), and bin is one. */
H_SETUP(dir_link_in_prefix_from_it)
{
	ck_assert(dir_link_in_prefix(run, c));
	free(dir_up(run->prog, 2, true));
	return true;
}

/* plain_exit's copy in a build tree run by the dynamic linker named as
 * the program (`ld.so ./t`): the executable is ld.so, installed, and the
 * program is left out as /proc/self/exe says, though the C library gives
 * AT_EXECFN and AT_PHDR the program's (AT_BASE 0 tells). */
#define LDSO "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
H_SETUP(by_ldso)
{
	if (access(LDSO, X_OK) != 0) {
		printf("note: no %s; skipping \"%s\"\n", LDSO, c->name);
		return false;
	}
	const char *prog = tree_with_copy("ldso", H_LIST("bin", NULL));
	const char **argv = calloc(3, sizeof *argv);
	ck_assert_ptr_nonnull(argv);
	argv[0] = prog;
	argv[1] = "leak";
	run->prog = LDSO;
	run->args = argv;
	return true;
}

/* The trace of the row's run (h_setup_strace's), which its check reads. */
static const char *trace_path;

static bool traced(struct h_spec *run, const struct h_case *c)
{
	trace_path = h_setup_strace(run, c, "readlink,readlinkat,open,openat");
	return trace_path != NULL;
}

H_SETUP(build_tree_traced)
{
	return in_build_tree(run, c) && traced(run, c);
}

H_SETUP(relative_traced)
{
	return script_and_interpreter_relative(run, c) && traced(run, c);
}

H_SETUP(installed_traced)
{
	return traced(run, c);
}

/* The verdict reached without /proc/self/exe's link: a process's first
 * look into /proc costs the kernel its /proc/PID entries (11-13 us of a
 * fresh process's start), which a process with the defaults, no report,
 * then never pays. */
H_CHECK(no_proc_exe)
{
	char *t = h_read_file(trace_path, NULL);
	ck_assert_msg(t, "no trace at %s", trace_path);
	/* the link read, where a measured process's later views open the
	 * file itself (ownread.c) */
	ck_assert_msg(!strstr(t, "readlinkat(AT_FDCWD, \"/proc/self/exe\"") &&
			      !strstr(t, "readlink(\"/proc/self/exe\""),
		      "%s: read the link /proc/self/exe; its trace:\n%.2000s", x->label, t);
	free(t);
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
	/* the executable's path, not the one named: links resolved */
	{ "a link in a prefix to a build tree's program", PROGRAMS(.args = H_LIST("leak")),
	  .setup = link_in_prefix, .exit = 23, .records = 1 },
	{ "a prefix's bin a link to a build tree's directory", PROGRAMS(.args = H_LIST("leak")),
	  .setup = dir_link_in_prefix, .exit = 23, .records = 1 },
	{ "a prefix's bin a link to a build tree's directory, run from the prefix",
	  PROGRAMS(.args = H_LIST("leak")), .setup = dir_link_in_prefix_from_it, .exit = 23,
	  .records = 1 },
	{ "a build tree's program run by ld.so", PROGRAMS(), .setup = by_ldso, .exit = 0,
	  .records = H_NO_RECORDS },
	/* the default rule's verdict without /proc (a passing run: a
	 * failing one looks up its parents at exit) */
	{ "in a build tree, its path not from /proc", PROGRAMS(.args = H_LIST("clean")), .setup = build_tree_traced,
	  .exit = 0, .records = 1, .check = no_proc_exe },
	{ "the interpreter, relative, its path not from /proc", PROGRAMS(.args = H_LIST("clean")),
	  .setup = relative_traced, .exit = 0, .records = 1, .check = no_proc_exe },
	{ "/usr/bin/true, its path not from /proc", PROGRAMS(.prog = "/usr/bin/true"),
	  .setup = installed_traced, .exit = 0, .records = H_NO_RECORDS, .check = no_proc_exe },
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
