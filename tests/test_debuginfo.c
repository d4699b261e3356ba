/*
 * test_debuginfo.c - where memcheck finds a stripped program's debug
 * information: through its .gnu_debuglink, beside it and in .debug/
 * (as gdb and valgrind look), never over the network: libdw's own search
 * would end by loading libdebuginfod (and libcurl and OpenSSL with it)
 * into the program at exit, which crashed programs that use OpenSSL.
 * And programs without .debug_aranges (clang's default), where libdw
 * 0.188 finds no compile unit for an address unless memcheck walks them.
 *
 * Where the debug information lies is a row each, whose setup makes the
 * stripped copy; the .debug_aranges cases compare two programs' stacks
 * (two runs), tests of their own.  Symbols are the allocator's business
 * nowhere here: glibc's alone.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* A tool (cp, objcopy, strip, a compiler) that must succeed. */
static void run_tool(const char *prog, const char *const *args)
{
	struct h_res x;
	H_EXEC(&x, .prog = prog, .args = args, .no_report = true, .text = "");
	h_expect_exit(&x, 0);
	h_res_free(&x);
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
	run_tool("/bin/cp", H_LIST(h_prog("plain_leak_direct"), prog));
	run_tool("/usr/bin/objcopy", H_LIST("--only-keep-debug", prog, h_env("%s/leak.debug", dir)));
	run_tool("/usr/bin/strip", H_LIST(prog));
	run_tool("/usr/bin/objcopy", H_LIST(h_env("--add-gnu-debuglink=%s/leak.debug", dir), prog));
	if (in_debug_subdir)
		ck_assert(rename(h_env("%s/leak.debug", dir), debug) == 0);
	return prog;
}

/* The first leak's first frame has the source file and line. */
H_CHECK(symbolized)
{
	ck_assert_uint_ge(h_nleaks(rec), 1);
	const char *file = h_frame_str(rec, 0, 0, "file");
	ck_assert_msg(file && strstr(file, "plain_leak_direct.c"),
		      "%s: first frame's file is %s", x->label, file ? file : "null");
	ck_assert_int_gt(h_frame_line(rec, 0, 0), 0);
	ck_assert_str_eq(h_frame_str(rec, 0, 0, "function"), "leak");
}

/* Leak 0's frame j of rec, or NULL. */
static const struct h_json *frame(const struct h_json *rec, size_t j)
{
	const struct h_json *leak = h_json_at(h_json_get(rec, "leaks"), 0);
	return h_json_at(h_json_get(leak, "stack"), j);
}

/* The first leak's stack (3 frames or more) of prog run preloaded (the process
 * record's; the caller frees x). */
static const struct h_json *leak_stack(const char *prog, struct h_res *x)
{
	H_EXEC(x, .prog = prog, .flags = H_PRELOAD, .text = "");
	h_expect_exit(x, 0);
	const struct h_json *rec = h_rec(x, "process");
	ck_assert_uint_ge(h_nleaks(rec), 1);
	ck_assert_uint_ge(h_leak_depth(rec, 0), 3);
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
	struct h_res x;
	H_EXEC(&x, .prog = "/usr/bin/readelf", .args = H_LIST("-S", "-W", prog),
	       .no_report = true, .text = "");
	h_expect_exit(&x, 0);
	bool has = strstr(x.r.out, ".debug_aranges") != NULL;
	h_res_free(&x);
	return has;
}

/* plain_leak_inlined as gcc built it, then without .debug_aranges: the
 * same frames, file:line and inlined frame included. */
START_TEST(no_aranges_gcc)
{
	const char *orig = h_prog("plain_leak_inlined");
	ck_assert_msg(has_aranges(orig), "gcc wrote no .debug_aranges: nothing to compare");
	struct h_res x, x2;
	const struct h_json *want = leak_stack(orig, &x);
	expect_inlined_leak(want, "gcc");

	const char *prog = h_tmppath("noaranges");
	run_tool("/usr/bin/objcopy", H_LIST("--remove-section=.debug_aranges", orig, prog));
	ck_assert(!has_aranges(prog));
	const struct h_json *got = leak_stack(prog, &x2);
	for (size_t j = 0; j < 3; j++)
		expect_same_frame(got, want, j, "gcc without .debug_aranges");
	h_res_free(&x2);
	h_res_free(&x);
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
	struct h_res x, x2;
	const struct h_json *want = leak_stack(h_prog("plain_leak_inlined"), &x);
	const char *src = expect_inlined_leak(want, "gcc");
	const char *prog = h_tmppath("clang");
	run_tool(clang, H_LIST("-O1", "-g", "-fno-builtin", "-fno-omit-frame-pointer", "-o", prog,
			       src));
	ck_assert_msg(!has_aranges(prog), "clang wrote .debug_aranges: nothing to test");
	const struct h_json *got = leak_stack(prog, &x2);
	expect_inlined_leak(got, "clang");
	h_res_free(&x2);
	h_res_free(&x);
}
END_TEST

H_SETUP(debuglink_beside)
{
	run->prog = stripped_copy(h_tmppath("beside"), false);
	return true;
}

H_SETUP(debuglink_in_dot_debug)
{
	run->prog = stripped_copy(h_tmppath("subdir"), true);
	return true;
}

/* Separate debug information without .debug_aranges. */
H_SETUP(debuglink_no_aranges)
{
	const char *dir = h_tmppath("debugnoaranges");
	run->prog = stripped_copy(dir, false);
	run_tool("/usr/bin/objcopy", H_LIST("--remove-section=.debug_aranges",
					    h_env("%s/leak.debug", dir)));
	return true;
}

/* No debug information anywhere. */
H_SETUP(no_debuginfo)
{
	const char *dir = h_tmppath("none");
	run->prog = stripped_copy(dir, false);
	ck_assert_int_eq(unlink(h_env("%s/leak.debug", dir)), 0);
	return true;
}

/* After a stripped copy ran without its debug information (its frames
 * unnamed, kept so in the shared cache under its build ID), the program
 * it was copied from, which has the same build ID and its own DWARF, is
 * named in full: the cache's key tells the two files apart (elfmod.c's
 * quick key holds the section headers' place and count). */
H_CHECK(original_still_named)
{
	struct h_res y;
	H_EXEC(&y, .prog = h_prog("plain_leak_direct"), .flags = H_PRELOAD, .text = "");
	const struct h_json *orig = h_rec(&y, "process");
	ck_assert_uint_ge(h_nleaks(orig), 1);
	H_EXPECT_FRAME(orig, 0, 0, "leak");
	const char *file = h_frame_str(orig, 0, 0, "file");
	ck_assert_msg(file && strstr(file, "plain_leak_direct.c"),
		      "%s: the unstripped program's first frame's file is %s", x->label,
		      file ? file : "null");
	h_res_free(&y);
}

/* Preloaded, with the dynamic linker saying what it loads: never
 * libdebuginfod. */
#define STRIPPED(setup_fn)                                                     \
	.allocators = H_ONLY(H_GLIBC), .setup = setup_fn,                       \
	.run = { .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_TEXT=full", "LD_DEBUG=files") }, \
	.no_err = H_LIST("libdebuginfod")

static const struct h_case cases[] = {
	{ "debuglink beside the program", STRIPPED(debuglink_beside), .record = "process",
	  .check = symbolized },
	{ "debuglink in .debug", STRIPPED(debuglink_in_dot_debug), .record = "process",
	  .check = symbolized },
	{ "debuglink, no .debug_aranges", STRIPPED(debuglink_no_aranges), .record = "process",
	  .check = symbolized },
	/* frames without names, and still no network client loaded */
	{ "no debug information, no debuginfod", STRIPPED(no_debuginfo),
	  .err = H_LIST("definitely lost"), .check = original_still_named },
};

int main(void)
{
	TCase *tc = h_tcase("debuginfo", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, no_aranges_gcc);
	tcase_add_test(tc, no_aranges_clang);
	return h_run_suite(NULL);
}
