/*
 * test_debuginfo.c - where memcheck finds a stripped program's debug
 * information: through its .gnu_debuglink, beside it and in .debug/
 * (as gdb and valgrind look), never over the network: libdw's own search
 * would end by loading libdebuginfod (and libcurl and OpenSSL with it)
 * into the program at exit, which crashed programs that use OpenSSL.
 * And programs without .debug_aranges (clang's default), where libdw
 * 0.188 finds no compile unit for an address unless memcheck walks them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Leak 0's frame j of rec, or NULL. */
static const struct h_json *frame(const struct h_json *rec, size_t j)
{
	const struct h_json *leak = h_json_at(h_json_get(rec, "leaks"), 0);
	return h_json_at(h_json_get(leak, "stack"), j);
}

/* The first leak's stack (3 frames or more) of prog run preloaded (the process
 * record's; the caller frees rep). */
static const struct h_json *leak_stack(const char *prog, const char *tag, struct h_report *rep)
{
	const char *report = h_tmppath(tag);
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, prog);
	ck_assert_msg(r.exit_code == 0, "%s: %s\n%s", tag, h_status(&r), r.err);
	H_LOAD(rep, report);
	const struct h_json *rec = h_record(rep, "process", r.pid);
	ck_assert_ptr_nonnull(rec);
	ck_assert_uint_ge(h_nleaks(rec), 1);
	ck_assert_uint_ge(h_leak_depth(rec, 0), 3);
	h_run_free(&r);
	return rec;
}

/* Frame j of got is frame j of want: function, file, line, inlined. */
static void expect_same_frame(const struct h_json *got, const struct h_json *want, size_t j,
			      const char *tag)
{
	static const char *const keys[] = { "function", "file", "line", "inlined" };
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		const struct h_json *g = h_json_get(frame(got, j), keys[k]);
		const struct h_json *w = h_json_get(frame(want, j), keys[k]);
		ck_assert_msg(g && w && g->type == w->type &&
			      (g->type != HJ_STR || strcmp(g->str, w->str) == 0) &&
			      (g->type != HJ_NUM || g->num == w->num) &&
			      (g->type != HJ_BOOL || g->b == w->b),
			      "%s: frame %zu's %s differs from the build with .debug_aranges "
			      "(got %s)", tag, j, keys[k],
			      !g ? "nothing" : g->type == HJ_NULL ? "null" :
			      g->type == HJ_STR ? g->str : "another value");
	}
}

/* The number of the line of file that contains needle, or 0. */
static long line_of(const char *file, const char *needle)
{
	char *text = h_read_file(file, NULL);
	ck_assert_msg(text, "cannot read %s", file);
	char *at = strstr(text, needle);
	long line = at ? 1 : 0;
	for (char *c = text; at && c < at; c++)
		line += *c == '\n';
	free(text);
	return line;
}

/* Leak 0 of rec is plain_leak_inlined's: store(), inlined into keep(),
 * at the lines their comments mark.  Returns the source file's name. */
static const char *expect_inlined_leak(const struct h_json *rec, const char *tag)
{
	H_EXPECT_FRAME(rec, 0, 0, "store");
	H_EXPECT_FRAME(rec, 0, 1, "keep");
	const struct h_json *inl = h_json_get(frame(rec, 0), "inlined");
	ck_assert_msg(inl && inl->type == HJ_BOOL && inl->b, "%s: frame 0 is not inlined", tag);
	const char *src = h_frame_str(rec, 0, 0, "file");
	ck_assert_msg(src && strstr(src, "plain_leak_inlined.c"), "%s: frame 0's file is %s", tag,
		      src ? src : "null");
	long leak = line_of(src, "/* the leak */"), call = line_of(src, "/* the inlined call */");
	ck_assert_msg(leak > 0 && h_frame_line(rec, 0, 0) == leak && h_frame_line(rec, 0, 1) == call,
		      "%s: lines %ld and %ld, expected %ld and %ld", tag, h_frame_line(rec, 0, 0),
		      h_frame_line(rec, 0, 1), leak, call);
	return src;
}

static bool has_aranges(const char *prog)
{
	const char *argv[] = { "/usr/bin/readelf", "-S", "-W", prog, NULL };
	struct h_run r;
	ck_assert_msg(h_run(&r, argv, NULL, 0, NULL) == 0 && r.exit_code == 0,
		      "readelf failed: %s", r.err ? r.err : "");
	bool has = strstr(r.out, ".debug_aranges") != NULL;
	h_run_free(&r);
	return has;
}

/* plain_leak_inlined as gcc built it, then without .debug_aranges: the
 * same frames, file:line and inlined frame included. */
START_TEST(no_aranges_gcc)
{
	const char *orig = h_prog("plain_leak_inlined");
	ck_assert_msg(has_aranges(orig), "gcc wrote no .debug_aranges: nothing to compare");
	struct h_report rep, rep2;
	const struct h_json *want = leak_stack(orig, "orig.jsonl", &rep);
	expect_inlined_leak(want, "gcc");

	const char *prog = h_tmppath("noaranges");
	const char *cp[] = { "/usr/bin/objcopy", "--remove-section=.debug_aranges", orig, prog,
			     NULL };
	run_tool(cp);
	ck_assert(!has_aranges(prog));
	const struct h_json *got = leak_stack(prog, "noaranges.jsonl", &rep2);
	for (size_t j = 0; j < 3; j++)
		expect_same_frame(got, want, j, "gcc without .debug_aranges");
	h_report_free(&rep2);
	h_report_free(&rep);
}
END_TEST

/* The same built by clang, which writes no .debug_aranges unless told
 * (-gdwarf-aranges); skipped where clang is not installed. */
START_TEST(no_aranges_clang)
{
	const char *clang = "/usr/bin/clang";
	if (access(clang, X_OK) != 0) {
		fprintf(stderr, "no_aranges_clang: %s not installed, skipped\n", clang);
		return;
	}
	struct h_report rep, rep2;
	const struct h_json *want = leak_stack(h_prog("plain_leak_inlined"), "gcc.jsonl", &rep);
	const char *src = expect_inlined_leak(want, "gcc");
	const char *prog = h_tmppath("clang");
	const char *cc[] = { clang, "-O1", "-g", "-fno-builtin", "-fno-omit-frame-pointer", "-o",
			     prog, src, NULL };
	run_tool(cc);
	ck_assert_msg(!has_aranges(prog), "clang wrote .debug_aranges: nothing to test");
	const struct h_json *got = leak_stack(prog, "clang.jsonl", &rep2);
	expect_inlined_leak(got, "clang");
	h_report_free(&rep2);
	h_report_free(&rep);
}
END_TEST

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

/* Separate debug information without .debug_aranges. */
START_TEST(debuglink_no_aranges)
{
	const char *dir = h_tmppath("debugnoaranges");
	const char *prog = stripped_copy(dir, false);
	const char *rm[] = { "/usr/bin/objcopy", "--remove-section=.debug_aranges",
			     h_env("%s/leak.debug", dir), NULL };
	run_tool(rm);
	expect_symbolized(prog, "debugnoaranges.jsonl");
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
	TCase *tc = h_tcase("debuginfo", 30);
	tcase_add_test(tc, debuglink_beside_the_program);
	tcase_add_test(tc, debuglink_in_dot_debug);
	tcase_add_test(tc, no_debuginfo_no_debuginfod);
	tcase_add_test(tc, no_aranges_gcc);
	tcase_add_test(tc, no_aranges_clang);
	tcase_add_test(tc, debuglink_no_aranges);
	return h_run_suite(NULL);
}
