/*
 * test_debuginfo.c - where memcheck finds a stripped program's debug
 * information: through its .gnu_debuglink, beside it and in .debug/
 * (as gdb and valgrind look), never over the network: libdw's own search
 * would end by loading libdebuginfod (and libcurl and OpenSSL with it)
 * into the program at exit, which crashed programs that use OpenSSL.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static void run_tool(const char *const argv[])
{
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, NULL, 0, NULL) == 0 && r.exit_code == 0,
		      "%s failed: %s", argv[0], r.err ? r.err : "");
	h_run_free(&r);
}

/* A stripped copy of plain_leak_direct in dir, its debug information in
 * debugdir (dir itself, or dir/.debug), linked by .gnu_debuglink. */
static const char *stripped_copy(const char *dir, bool in_debug_subdir)
{
	mkdir(dir, 0700);
	const char *prog = h_env("%s/leak", dir);
	const char *debugdir = in_debug_subdir ? h_env("%s/.debug", dir) : dir;
	mkdir(debugdir, 0700);
	const char *debug = h_env("%s/leak.debug", debugdir);
	const char *cp[] = { "/bin/cp", h_prog("plain_leak_direct"), prog, NULL };
	run_tool(cp);
	const char *keep[] = { "/usr/bin/objcopy", "--only-keep-debug", prog,
			       h_env("%s/leak.debug", dir), NULL };
	run_tool(keep);
	const char *strip[] = { "/usr/bin/strip", prog, NULL };
	run_tool(strip);
	const char *link[] = { "/usr/bin/objcopy", h_env("--add-gnu-debuglink=%s/leak.debug", dir),
			       prog, NULL };
	run_tool(link);
	if (in_debug_subdir)
		ck_assert(rename(h_env("%s/leak.debug", dir), debug) == 0);
	return prog;
}

/* Run prog preloaded, with the dynamic linker saying what it loads; the
 * first leak's first frame must have the source file and line. */
static void expect_symbolized(const char *prog, const char *tag)
{
	const char *report = h_tmppath(tag);
	const char *env[] = { "MEMCHECK_TEXT=full", "LD_DEBUG=files",
			      h_env("MEMCHECK_REPORT=%s", report), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, prog);
	ck_assert_msg(r.exit_code == 0, "%s: %s\n%s", tag, h_status(&r), r.err);
	ck_assert_msg(!strstr(r.err, "libdebuginfod"),
		      "%s: libdebuginfod was loaded into the program", tag);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_ptr_nonnull(rec);
	ck_assert_uint_ge(h_nleaks(rec), 1);
	const char *file = h_frame_str(rec, 0, 0, "file");
	ck_assert_msg(file && strstr(file, "plain_leak_direct.c"),
		      "%s: first frame's file is %s", tag, file ? file : "null");
	ck_assert_int_gt(h_frame_line(rec, 0, 0), 0);
	ck_assert_str_eq(h_frame_str(rec, 0, 0, "function"), "leak");
	h_report_free(&rep);
	h_run_free(&r);
}

START_TEST(debuglink_beside_the_program)
{
	expect_symbolized(stripped_copy(h_tmppath("beside"), false), "beside.jsonl");
}
END_TEST

START_TEST(debuglink_in_dot_debug)
{
	expect_symbolized(stripped_copy(h_tmppath("subdir"), true), "subdir.jsonl");
}
END_TEST

/* No debug information anywhere: frames without names, and still no
 * network client loaded. */
START_TEST(no_debuginfo_no_debuginfod)
{
	const char *dir = h_tmppath("none");
	const char *prog = stripped_copy(dir, false);
	unlink(h_env("%s/leak.debug", dir));
	const char *env[] = { "MEMCHECK_TEXT=full", "LD_DEBUG=files", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, prog);
	ck_assert_msg(r.exit_code == 0, "%s\n%s", h_status(&r), r.err);
	ck_assert_msg(strstr(r.err, "definitely lost"), "no leak reported:\n%s", r.err);
	ck_assert_msg(!strstr(r.err, "libdebuginfod"), "libdebuginfod was loaded");
	h_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("debuginfo");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, debuglink_beside_the_program);
	tcase_add_test(tc, debuglink_in_dot_debug);
	tcase_add_test(tc, no_debuginfo_no_debuginfod);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
