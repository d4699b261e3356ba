/*
 * test_suppress.c - suppression files (memcheck-suppressions(5)) on whole
 * programs: tests/prog/plain_supp under the preloaded library with
 * tests/supp/plain_supp.supp by MEMCHECK_SUPPRESSIONS (figures moved
 * into suppressed, the use counts in the JSON record and the text
 * report), a bad file (one message, verdict fail), the CLI (its own check
 * of the files, exit 2), generated entries read back by memcheck and by
 * valgrind, valgrind's own generated entries read by memcheck, the
 * shipped files found beside the library and turned off, and matching
 * done only where something reads its outcome (a passing process that
 * leaves only reachable blocks, in the one-line text, reads no shipped
 * file; each reader of the figures sees them as with every record
 * matched), and the parsed files kept in MEMCHECK_CACHE (the same
 * outcome cold and warm under every allocator, the cache read, a
 * damaged one or an edited file parsed again, a shipped file edited or
 * added seen at once, a bad file never kept).
 *
 * A run is a row (its files made by its setup: the paths are the
 * build's and the test's); what reads a file an earlier run wrote
 * (generated entries, valgrind's) is a test, its runs H_EXEC's.  What a
 * suppression file matches does not depend on the allocator: glibc's
 * alone.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* plain_supp's blocks (tests/prog/plain_supp.c): reachable from globals
 * keep_malloc 48, keep_calloc 128, keep_realloc 80, keep_memalign 192,
 * keep_twice 256; with "lost", definitely lost lose(64) twice from main
 * and lose(32) from lose_other. */
#define REACHABLE_BLOCKS 5
#define REACHABLE_BYTES (48 + 128 + 80 + 192 + 256)

static const char *supp_file(void)
{
	static char path[4096];
	const char *b = h_build();
	snprintf(path, sizeof path, "%.*s/tests/supp/plain_supp.supp",
		 (int)(strrchr(b, '/') - b), b);
	return path;
}

static const char *valgrind_path(void)
{
	static const char *const paths[] = { "/usr/bin/valgrind", "/usr/local/bin/valgrind" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* plain_supp [arg] preloaded with env (MEMCHECK_TEXT=full); its process
 * record (x freed by the caller). */
static const struct h_json *run_prog(struct h_res *x, const char *arg, const char *const *env)
{
	H_EXEC(x, .prog = "plain_supp", .args = arg ? H_LIST(arg) : NULL, .flags = H_PRELOAD,
	       .env = env, .text = "full");
	h_expect_exit(x, 0);
	return h_rec(x, "process");
}

static const struct h_json *supp_used(const struct h_json *rec, size_t i)
{
	return h_json_at(h_json_get(rec, "suppressions"), i);
}

static const char *write_tmp(const char *tag, const char *text)
{
	const char *p = h_tmppath(tag);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* Entries in a suppression file: its '{' lines. */
static int entries(const char *path)
{
	char *t = h_read_file(path, NULL);
	ck_assert_msg(t != NULL, "cannot read %s", path);
	int n = 0;
	for (char *p = t; (p = strstr(p, "\n{\n")) || (p == t && *t == '{'); p++)
		n++;
	if (*t == '{')
		n++;
	free(t);
	return n;
}

/* ---- one run each: rows ------------------------------------------------ */

/* The row's files, for its callback. */
static struct {
	const char *bad, *dir;
	const char *env[6], *words[9];
} files;

static const char bad_text[] = "{\n   n\n   Memcheck:Leek\n   fun:f\n}\n";

/* env: the row's, then NAME=value. */
static void env_adding(struct h_spec *run, const char *var)
{
	size_t n = 0;
	while (run->env && run->env[n] && n < 4) {
		files.env[n] = run->env[n];
		n++;
	}
	files.env[n++] = var;
	files.env[n] = NULL;
	run->env = files.env;
}

H_SETUP(the_file)
{
	env_adding(run, h_env("MEMCHECK_SUPPRESSIONS=%s", supp_file()));
	return true;
}

H_SETUP(the_file_and_a_bad_one)
{
	files.bad = write_tmp("bad.supp", bad_text);
	env_adding(run, h_env("MEMCHECK_SUPPRESSIONS=%s:%s", supp_file(), files.bad));
	return true;
}

/* A path longer than the system takes (PATH_MAX): skipped without a
 * word before session 45, the region passing with its entries unread;
 * now said and failed as a file that cannot be read. */
static char long_path[5001];

H_SETUP(the_file_and_a_path_too_long)
{
	char *path = long_path;
	memset(path, 'a', sizeof long_path - 1);
	path[0] = '/';
	env_adding(run, h_env("MEMCHECK_SUPPRESSIONS=%s:%s", supp_file(), path));
	return true;
}

H_CHECK(path_too_long_said_once)
{
	const char *msg = "...: a path of 5000 bytes, longer than the system takes";
	ck_assert_msg(h_violation_has(rec, msg), "no violation naming '%s'", msg);
	const char *said = h_env("MEMCHECK_SUPPRESSIONS: suppressions not read: %.48s%s",
				 long_path, msg);
	ck_assert_msg(h_count_lines(x->r.err, "suppressions not read") == 1 &&
			      h_count_lines(x->r.err, said) == 1,
		      "expected one line with '%s':\n%s", said, x->r.err);
}

H_SETUP(a_bad_one)
{
	files.bad = write_tmp("bad.supp", bad_text);
	env_adding(run, h_env("MEMCHECK_SUPPRESSIONS=%s", files.bad));
	return true;
}

/* An entry whose name line is missing: valgrind 3.19 reads its
 * Memcheck:Leak line as the name and its first frame line as the tool
 * ("fun", no tool of its), and skips it without a word; memcheck skips
 * it too, and says so once with the file and line (harden43). */
static const char noname_text[] = "{\n   Memcheck:Leak\n   fun:malloc\n   fun:lose\n}\n";

H_SETUP(a_nameless_entry)
{
	files.bad = write_tmp("noname.supp", noname_text);
	env_adding(run, h_env("MEMCHECK_SUPPRESSIONS=%s", files.bad));
	return true;
}

/* The note names the file and line, at every run: the second, whose
 * parsed set the warm cache (MEMCHECK_CACHE, suppcache.c) would give,
 * said nothing before session 44.  valgrind's verdict on the same
 * program and file is memcheck's: nothing suppressed, 160 bytes lost. */
H_CHECK(nameless_entry_noted_as_valgrind_skips)
{
	const char *msg = h_env("%s:2: the suppression begun at line 1 has no name line",
				files.bad);
	ck_assert_msg(strstr(x->r.err, msg), "no '%s' in:\n%s", msg, x->r.err);
	struct h_res again;
	H_EXEC(&again, .prog = "plain_supp", .args = H_LIST("lost"), .flags = H_PRELOAD,
	       .text = "summary", .alloc = x->alloc,
	       .env = H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", files.bad)));
	ck_assert_msg(strstr(again.r.err, msg), "second run: no '%s' in:\n%s", msg, again.r.err);
	h_res_free(&again);
	const char *vg = h_valgrind_path();
	if (!vg || x->alloc != 0)
		return;
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=full",
					      h_env("--suppressions=%s", files.bad),
					      h_prog("plain_supp"), "lost"),
	       .no_report = true, .text = "");
	struct h_vg_leaks l[1];
	ck_assert_int_eq(h_valgrind_leaks(v.r.err, l, 1), 1);
	ck_assert_uint_eq(l[0].bytes[HVG_DEF], 160);
	ck_assert_uint_eq(l[0].blocks[HVG_SUP], 0);
	ck_assert_msg(!strstr(v.r.err, "FATAL"), "%s", v.r.err);
	h_res_free(&v);
}

/* The figures moved, the use counts in the file's order, the text
 * report in valgrind's words. */
H_CHECK(suppressed_and_counted)
{
	ck_assert(h_violation_has(rec, "32 bytes in 1 blocks definitely lost"));
	/* suppressed records are not listed among the leaks */
	ck_assert_uint_eq(h_nleaks(rec), 4);
	for (size_t i = 0; i < h_nleaks(rec); i++) {
		const char *f0 = h_frame_str(rec, i, 0, "function");
		ck_assert_msg(f0 && strcmp(f0, "keep_malloc") && strcmp(f0, "keep_calloc"),
			      "leak %zu at %s", i, f0 ? f0 : "?");
	}
	static const struct {
		const char *name;
		uint64_t line, records, blocks, bytes;
	} want[] = {
		{ "valgrind-malloc", 5, 1, 1, 48 },
		{ "any-alloc", 15, 1, 1, 128 },
		{ "lost-from-main", 22, 2, 2, 128 },
	};
	ck_assert_uint_eq(h_json_get(rec, "suppressions")->n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct h_json *u = supp_used(rec, i);
		ck_assert_str_eq(h_str(u, "name"), want[i].name);
		ck_assert_str_eq(h_str(u, "file"), supp_file());
		ck_assert_uint_eq(h_u64(u, "line"), want[i].line);
		ck_assert_uint_eq(h_u64(u, "records"), want[i].records);
		ck_assert_uint_eq(h_u64(u, "blocks"), want[i].blocks);
		ck_assert_uint_eq(h_u64(u, "bytes"), want[i].bytes);
	}
	const char *line = h_env("used_suppression: 2 lost-from-main %s:22 suppressed: "
				 "128 bytes in 2 blocks", supp_file());
	ck_assert_msg(strstr(x->r.err, line), "no '%s' in:\n%s", line, x->r.err);
}

H_CHECK(no_suppressions_listed)
{
	ck_assert_uint_eq(h_json_get(rec, "suppressions")->n, 0);
}

/* One violation and one line of stderr naming the bad file's line, and
 * the variable that named the file (harden46: not named on main). */
H_CHECK(bad_file_said_once)
{
	const char *msg = h_env("%s:3: unknown Memcheck suppression kind 'Leek'", files.bad);
	ck_assert_msg(h_violation_has(rec, msg), "no violation naming %s", msg);
	const char *said = h_env("MEMCHECK_SUPPRESSIONS: suppressions not read: %s", msg);
	ck_assert_msg(h_count_lines(x->r.err, "suppressions not read") == 1 &&
		      h_count_lines(x->r.err, said) == 1, "expected one line with '%s':\n%s", said,
		      x->r.err);
}

H_CHECK(violation_names_the_bad_file)
{
	ck_assert(h_violation_has(rec, files.bad));
}

/* memcheck run checks the files first: the bad one is exit 2, the
 * command not run. */
H_SETUP(cli_with_a_bad_file)
{
	files.bad = write_tmp("bad.supp", bad_text);
	const char *const words[] = { "run", "-a", "glibc", "--suppressions", supp_file(),
				      "--suppressions", files.bad, NULL };
	memcpy(files.words, words, sizeof words);
	run->cli = files.words;
	return true;
}

H_CHECK(cli_names_the_bad_line)
{
	const char *msg = h_env("%s:3: unknown Memcheck suppression kind 'Leek'", files.bad);
	ck_assert_msg(strstr(x->r.err, msg), "no '%s' in:\n%s", msg, x->r.err);
}

/* The shipped files: every *.supp in ../suppressions from the library,
 * unless MEMCHECK_DEFAULT_SUPPRESSIONS=0.  A copy of the library in a
 * directory of its own, so that what the project ships does not count;
 * a README there is not a .supp and not read. */
static void own_tree_via(struct h_spec *run, const char *supp_text, const char *via)
{
	const char *root = h_tmppath("tree"), *lib = h_env("%s/lib", root);
	files.dir = h_env("%s/suppressions", root);
	ck_assert_int_eq(mkdir(root, 0755), 0);
	ck_assert_int_eq(mkdir(lib, 0755), 0);
	ck_assert_int_eq(mkdir(h_env("%s/sub", lib), 0755), 0);
	ck_assert_int_eq(mkdir(files.dir, 0755), 0);
	struct h_res cp;
	H_EXEC(&cp, .prog = "/bin/cp", .args = H_LIST(h_lib(), h_env("%s/libmemcheck.so.0", lib)),
	       .no_report = true, .text = "");
	h_expect_exit(&cp, 0);
	h_res_free(&cp);
	FILE *f = fopen(h_env("%s/a.supp", files.dir), "w");
	ck_assert_ptr_nonnull(f);
	fputs(supp_text, f);
	fclose(f);
	f = fopen(h_env("%s/README", files.dir), "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a suppression file\n", f);
	fclose(f);
	env_adding(run, h_env("LD_PRELOAD=%s%s/libmemcheck.so.0", lib, via));
}

static void own_tree(struct h_spec *run, const char *supp_text)
{
	own_tree_via(run, supp_text, "");
}

static const char shipped_text[] =
	"{\n   shipped\n   Memcheck:Leak\n   fun:malloc\n   fun:keep_malloc\n}\n";

H_SETUP(library_with_files_of_its_own)
{
	own_tree(run, shipped_text);
	return true;
}

/* The same library named through "..", as a program linked with -rpath
 * '$ORIGIN/../..' names it: the files are its directory's parent's,
 * not the parent of the name's text (which, on main, read none). */
H_SETUP(library_named_through_dotdot)
{
	own_tree_via(run, shipped_text, "/sub/..");
	return true;
}

/* A shipped file that does not parse: read, it fails the region
 * ("suppression file not read"); so whether a run reads the shipped
 * files shows in its verdict, its exit status and its text. */
H_SETUP(library_with_a_bad_file_of_its_own)
{
	own_tree(run, bad_text);
	files.bad = h_env("%s/a.supp", files.dir);
	return true;
}

/* The tree's files, and MEMCHECK_BUDGET: a file of one rule. */
static bool tree_and_budget(struct h_spec *run, const char *supp_text, const char *rule)
{
	own_tree(run, supp_text);
	env_adding(run, h_env("MEMCHECK_BUDGET=%s", write_tmp("memcheck.budget", rule)));
	return true;
}

H_SETUP(bad_files_and_a_budget_on_allocs)
{
	return tree_and_budget(run, bad_text, "allocs <= 1\n");
}

H_SETUP(bad_files_and_a_budget_on_reachable)
{
	return tree_and_budget(run, bad_text, "still_reachable.bytes <= 100000\n");
}

/* plain_supp's reachable bytes less keep_malloc's 48, which the shipped
 * file suppresses: within the budget only when matched before the
 * budget is checked. */
H_SETUP(files_and_a_tight_budget_on_reachable)
{
	return tree_and_budget(run, shipped_text,
			       h_env("still_reachable.bytes <= %d\n", REACHABLE_BYTES - 48));
}

H_SETUP(files_and_a_budget_on_allocs)
{
	return tree_and_budget(run, shipped_text, "allocs <= 1\n");
}

H_CHECK(suppressed_by_the_shipped_file)
{
	ck_assert_str_eq(h_str(supp_used(rec, 0), "file"), h_env("%s/a.supp", files.dir));
}

/* The shipped files on what glibc keeps (threads' DTVs, dlopen's lists,
 * locale and alias data): nothing lost, and what stays reachable only
 * strdup'd copies whose callers the frame-pointer walk cannot see past
 * glibc.  The same with MEMCHECK_SYMBOLIZE_SYSTEM=1 (the row), where
 * glibc's frames get file, line and inlined frames too, as with the
 * default 0 (here), where they have their symbol tables' names only. */
static uint64_t glibc_kept(const struct h_json *r, const char *how)
{
	ck_assert_msg(h_count(r, "definitely_lost", "bytes") == 0 &&
		      h_count(r, "indirectly_lost", "bytes") == 0 &&
		      h_count(r, "possibly_lost", "bytes") == 0,
		      "%s: glibc's memory reported lost", how);
	ck_assert_msg(h_count(r, "still_reachable", "bytes") < 512, "%s: %s bytes still reachable",
		      how, h_fmt(h_count(r, "still_reachable", "bytes")));
	uint64_t suppressed = h_count(r, "suppressed", "bytes");
	ck_assert_msg(suppressed > 4096, "%s: only %s bytes suppressed", how, h_fmt(suppressed));
	H_EXPECT_STR(r, "verdict", "pass");
	return suppressed;
}

H_CHECK(same_with_system_names_only)
{
	uint64_t full = glibc_kept(rec, "SYMBOLIZE_SYSTEM=1");
	struct h_res fast;
	H_EXEC(&fast, .prog = "plain_clean", .args = H_LIST("all"), .flags = H_PRELOAD,
	       .env = H_LIST("MEMCHECK_SYMBOLIZE_SYSTEM=0"));
	h_expect_exit(&fast, 0);
	ck_assert_uint_eq(glibc_kept(h_rec(&fast, "process"), "SYMBOLIZE_SYSTEM=0"), full);
	h_res_free(&fast);
}

/* plain_supp preloaded (flags H_PRELOAD; 0: by its own LD_PRELOAD) */
#define PLAIN_SUPP(arg, preload, ...)                                          \
	.allocators = H_ONCE, .record = "process",                             \
	.run = { .prog = "plain_supp", .args = arg, .flags = preload, .text = "full", __VA_ARGS__ }

/* plain_supp by its own LD_PRELOAD (the row's setup's), no JSON report,
 * memcheck's exit status */
#define LAZY(arg, ...)                                                         \
	.allocators = H_ONCE,                                                  \
	.run = { .prog = "plain_supp", .args = arg, .flags = H_EXITCODE, .no_report = true, \
		 __VA_ARGS__ }

static const struct h_case cases[] = {
	{ "MEMCHECK_SUPPRESSIONS", PLAIN_SUPP(H_LIST("lost"), H_PRELOAD,
					      .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0")),
	  .setup = the_file, .check = suppressed_and_counted,
	  .want = { { "suppressed.blocks", 4 }, { "suppressed.bytes", 48 + 128 + 2 * 64 },
		    { "definitely_lost.blocks", 1 }, { "definitely_lost.bytes", 32 },
		    { "still_reachable.blocks", 3 }, { "still_reachable.bytes", 80 + 192 + 256 },
		    { "live_bytes", REACHABLE_BYTES + 2 * 64 + 32 },
		    { "verdict", .str = "fail" } },   /* lose_other's block */
	  .err = H_LIST("suppressed: 304 bytes in 4 blocks") },
	/* an entry without its name line: skipped as valgrind skips it, said */
	{ "an entry without its name line", .record = "process",
	  .run = { .prog = "plain_supp", .args = H_LIST("lost"), .flags = H_PRELOAD,
		   .text = "summary" },
	  .setup = a_nameless_entry, .check = nameless_entry_noted_as_valgrind_skips,
	  .want = { { "definitely_lost.blocks", 3 }, { "definitely_lost.bytes", 160 } },
	  .err_lines = { { "has no name line", 1 } } },
	/* without the file: nothing suppressed, no suppressions listed */
	{ "without the file", PLAIN_SUPP(H_LIST("lost"), H_PRELOAD,
					 .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0")),
	  .want = { { "suppressed.blocks", 0 }, { "definitely_lost.bytes", 2 * 64 + 32 } },
	  .check = no_suppressions_listed },
	/* a bad file fails every region; the good one still applies */
	{ "a bad file beside a good one", PLAIN_SUPP(NULL, H_PRELOAD,
						     .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0")),
	  .setup = the_file_and_a_bad_one, .check = bad_file_said_once,
	  .want = { { "verdict", .str = "fail" }, { "suppressed.blocks", 2 } } },
	{ "a path too long beside a good file", PLAIN_SUPP(NULL, H_PRELOAD,
							.env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0")),
	  .setup = the_file_and_a_path_too_long, .check = path_too_long_said_once,
	  .want = { { "verdict", .str = "fail" }, { "suppressed.blocks", 2 } } },
	/* A region that leaves nothing fails too.  MEMCHECK_PROGRAMS:
	 * /bin/true is installed on the system, which memcheck leaves out
	 * by default. */
	{ "a bad file, a clean region", .allocators = H_ONCE, .record = "process",
	  .run = { .prog = "/bin/true", .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_PROGRAMS=*") },
	  .setup = a_bad_one, .exit = H_EXIT_ANY, .want = { { "verdict", .str = "fail" } },
	  .check = violation_names_the_bad_file },
	{ "memcheck run with a bad file", .allocators = H_ONCE, .setup = cli_with_a_bad_file,
	  .run = { .prog = "plain_supp", .text = "" }, .exit = 2,
	  .no_err = H_LIST("running under"), .check = cli_names_the_bad_line },
	{ "the shipped files", PLAIN_SUPP(NULL, 0), .setup = library_with_files_of_its_own,
	  .want = { { "suppressed.bytes", 48 }, { "verdict", .str = "pass" } },
	  .check = suppressed_by_the_shipped_file },
	{ "the shipped files, the library named through ..", PLAIN_SUPP(NULL, 0),
	  .setup = library_named_through_dotdot,
	  .want = { { "suppressed.bytes", 48 }, { "verdict", .str = "pass" } },
	  .check = suppressed_by_the_shipped_file },
	{ "the shipped files turned off",
	  PLAIN_SUPP(NULL, 0, .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0")),
	  .setup = library_with_files_of_its_own, .want = { { "suppressed.bytes", 0 } } },
	/* Matching is lazy (region.c): a passing region's still reachable
	 * records only where something reads what it changes.  Without a
	 * JSON report, in the default one-line text, a process that leaves
	 * only reachable blocks reads no shipped file: the bad one fails
	 * nothing.  Each reader of the figures below reads them. */
	{ "reachable only, one line: no shipped file read",
	  LAZY(NULL, .text = "summary"), .setup = library_with_a_bad_file_of_its_own,
	  .err = H_LIST("no leaks"), .no_err = H_LIST("suppressions not read", "FAIL") },
	{ "lost records: the shipped files read", LAZY(H_LIST("lost"), .text = "summary"),
	  .setup = library_with_a_bad_file_of_its_own, .exit = 23,
	  .err = H_LIST("suppressions not read", "FAIL: ", "suppression file not read") },
	{ "reachable only, the full text: read", LAZY(NULL, .text = "full"),
	  .setup = library_with_a_bad_file_of_its_own, .exit = 23,
	  .err = H_LIST("suppressions not read", "FAIL: ") },
	{ "reachable only, a JSON report: read", .allocators = H_ONCE, .record = "process",
	  .run = { .prog = "plain_supp", .flags = H_EXITCODE, .text = "none" },
	  .setup = library_with_a_bad_file_of_its_own, .exit = 23,
	  .want = { { "verdict", .str = "fail" } }, .check = violation_names_the_bad_file },
	{ "reachable only, a budget on them: read", LAZY(NULL, .text = "summary"),
	  .setup = bad_files_and_a_budget_on_reachable, .exit = 23,
	  .err = H_LIST("suppressions not read", "FAIL: ") },
	{ "reachable only, failed by the budget: read", LAZY(NULL, .text = "summary"),
	  .setup = bad_files_and_a_budget_on_allocs, .exit = 23,
	  .err = H_LIST("suppressions not read", "FAIL: ", "allocs", "suppression file not read") },
	/* The figures each reader sees are those of every record matched:
	 * what the shipped file suppresses (keep_malloc's 48 bytes) in the
	 * text of a failed region and of MEMCHECK_TEXT=full, and a budget
	 * on the reachable bytes checked after matching. */
	{ "the full text, no JSON: matched", LAZY(NULL, .text = "full"),
	  .setup = library_with_files_of_its_own,
	  .err = H_LIST("suppressed: 48 bytes in 1 blocks", "used_suppression: 1 shipped ",
			"still reachable: 656 bytes in 4 blocks", "PASS") },
	{ "failed on its lost records, no JSON: all matched", LAZY(H_LIST("lost"), .text = "summary"),
	  .setup = library_with_files_of_its_own, .exit = 23,
	  .err = H_LIST("suppressed: 48 bytes in 1 blocks", "used_suppression: 1 shipped ",
			"still reachable: 656 bytes in 4 blocks", "definitely lost: 160 bytes") },
	{ "failed by the budget, no JSON: all matched", LAZY(NULL, .text = "summary"),
	  .setup = files_and_a_budget_on_allocs, .exit = 23,
	  .err = H_LIST("suppressed: 48 bytes in 1 blocks", "used_suppression: 1 shipped ",
			"still reachable: 656 bytes in 4 blocks") },
	/* memcheck_end(&r): the caller reads the figures */
	{ "memcheck_end's struct, no JSON: matched", .allocators = H_ONCE,
	  .run = { .prog = "supp_kept", .flags = H_EXITCODE, .no_report = true, .text = "summary" },
	  .setup = library_with_files_of_its_own,
	  .stdout_is = "suppressed 48 in 1, reachable 80 in 1, pass 1\n" },
	{ "memcheck_end's struct, a bad file: read", .allocators = H_ONCE, .exit = 1,
	  .run = { .prog = "supp_kept", .flags = H_EXITCODE, .no_report = true, .text = "summary" },
	  .setup = library_with_a_bad_file_of_its_own, .err = H_LIST("suppressions not read"),
	  .no_err = H_LIST("MEMCHECK_SUPPRESSIONS: suppressions"),
	  .stdout_is = "suppressed 0 in 0, reachable 128 in 2, pass 0\n" },
	{ "memcheck_end(NULL), a bad file: not read", .allocators = H_ONCE,
	  .run = { .prog = "supp_kept", .args = H_LIST("null"), .flags = H_EXITCODE,
		   .no_report = true, .text = "summary" },
	  .setup = library_with_a_bad_file_of_its_own, .no_err = H_LIST("suppressions not read") },
	{ "a budget on the reachable bytes, no JSON: matched first",
	  LAZY(NULL, .text = "summary"), .setup = files_and_a_tight_budget_on_reachable,
	  .err = H_LIST("no leaks"), .no_err = H_LIST("FAIL") },
	{ "the shipped files on glibc's own", .allocators = H_ONCE, .record = "process",
	  .run = { .prog = "plain_clean", .args = H_LIST("all"), .flags = H_PRELOAD,
		   .env = H_LIST("MEMCHECK_SYMBOLIZE_SYSTEM=1") },
	  .check = same_with_system_names_only },
};

/* ---- several runs each: tests --------------------------------------- */

/* Good files reach the command's runs; --gen-suppressions writes the
 * rest, which suppress it all next time. */
START_TEST(cli_passes_files_on_and_generates)
{
	const char *gen = h_tmppath("cli-gen.supp");
	struct h_res x;
	H_EXEC(&x, .cli = H_LIST("run", "-a", "glibc", "--suppressions", supp_file(),
				 "--gen-suppressions", gen),
	       .prog = "plain_supp", .args = H_LIST("lost"), .text = "",
	       .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	h_expect_exit(&x, 1);
	const struct h_json *rec = h_record(&x.rep, "process", 0);
	ck_assert_ptr_nonnull(rec);
	H_EXPECT_COUNT(rec, "suppressed", "bytes", 304);
	h_res_free(&x);
	ck_assert_int_eq(entries(gen), 4);  /* 3 reachable, lose_other's */
	H_EXEC(&x, .cli = H_LIST("run", "-a", "glibc", "--suppressions", supp_file(),
				 "--suppressions", gen),
	       .prog = "plain_supp", .args = H_LIST("lost"), .text = "", .no_report = true,
	       .env = H_LIST("MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	h_expect_exit(&x, 0);
	h_res_free(&x);
}
END_TEST

/* "suppressed: 704 bytes in 5 blocks" in valgrind's LEAK SUMMARY */
static bool vg_suppressed(const char *err, uint64_t *bytes, uint64_t *blocks)
{
	/* The summary at exit: memcheck's valgrind mode prints one per
	 * region before it. */
	const char *s = strstr(err, "HEAP SUMMARY:");
	s = s ? strstr(s, "LEAK SUMMARY:") : NULL;
	s = s ? strstr(s, "suppressed: ") : NULL;
	unsigned long long a, b;
	if (!s || sscanf(s, "suppressed: %llu bytes in %llu blocks", &a, &b) != 2)
		return false;   /* figures under 1,000: no commas */
	*bytes = a;
	*blocks = b;
	return true;
}

START_TEST(test_generated_round_trip)
{
	/* memcheck reads back what it wrote: everything suppressed */
	const char *gen = h_tmppath("gen.supp");
	struct h_res m;
	const struct h_json *rec = run_prog(&m, "lost", H_LIST(h_env("MEMCHECK_GEN_SUPPRESSIONS=%s", gen),
								"MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	uint64_t live = h_u64(rec, "live_bytes"), blocks = h_u64(rec, "live_blocks");
	ck_assert_uint_eq(live, REACHABLE_BYTES + 2 * 64 + 32);
	ck_assert_int_eq(entries(gen), 8);     /* one per leak record */
	h_res_free(&m);
	rec = run_prog(&m, "lost", H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", gen),
					  "MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	H_EXPECT_COUNT(rec, "suppressed", "bytes", live);
	H_EXPECT_COUNT(rec, "suppressed", "blocks", blocks);
	H_EXPECT_STR(rec, "verdict", "pass");
	ck_assert_uint_eq(h_nleaks(rec), 0);
	h_res_free(&m);

	const char *vg = valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; generated entries checked with memcheck only\n");
		return;
	}
	/* valgrind reads the same entries and suppresses the same bytes,
	 * every kind (memcheck's own tables are hidden from valgrind's
	 * scan: lib/vgmode.c). */
	struct h_res v;
	H_EXEC(&v, .prog = vg, .no_report = true,
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all",
			      "--soname-synonyms=somalloc=nouserintercepts",
			      h_env("--suppressions=%s", gen), h_prog("plain_supp"), "lost"),
	       .env = H_LIST(h_env("LD_PRELOAD=%s", h_lib()), "MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	h_expect_exit(&v, 0);
	uint64_t vb = 0, vn = 0;
	ck_assert_msg(vg_suppressed(v.r.err, &vb, &vn), "no suppressed line:\n%s", v.r.err);
	ck_assert_msg(vb == live && vn == blocks,
		      "valgrind suppressed %llu bytes in %llu blocks, memcheck %llu in %llu:\n%s",
		      (unsigned long long)vb, (unsigned long long)vn, (unsigned long long)live,
		      (unsigned long long)blocks, v.r.err);
	h_res_free(&v);
}
END_TEST

/* valgrind's own --gen-suppressions=all entries (frame 0 the allocation
 * function) suppress the same records under memcheck. */
START_TEST(test_valgrinds_entries)
{
	const char *vg = valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; its own entries not tried\n");
		return;
	}
	struct h_res v;
	H_EXEC(&v, .prog = vg, .no_report = true, .text = "",
	       .args = H_LIST("--leak-check=full", "--show-leak-kinds=all",
			      "--gen-suppressions=all", h_prog("plain_supp"), "lost"));
	h_expect_exit(&v, 0);
	/* its entries: the lines that are not valgrind's "==pid==" ones */
	const char *path = h_tmppath("vg.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	for (char *line = v.r.err, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		if (strncmp(line, "==", 2) != 0) {
			fprintf(f, "%.*s\n", (int)(nl - line), line);
			n += line[0] == '{';
		}
	}
	fclose(f);
	ck_assert_int_eq(n, 8);
	h_res_free(&v);
	struct h_res m;
	const struct h_json *rec = run_prog(&m, "lost", H_LIST(h_env("MEMCHECK_SUPPRESSIONS=%s", path),
								"MEMCHECK_DEFAULT_SUPPRESSIONS=0"));
	H_EXPECT_COUNT(rec, "suppressed", "bytes", REACHABLE_BYTES + 2 * 64 + 32);
	H_EXPECT_STR(rec, "verdict", "pass");
	h_res_free(&m);
}
END_TEST

/* ---- the parsed files kept in MEMCHECK_CACHE (suppcache.c) ------------ */

/* err's used_suppression lines appended to s (len of its cap bytes
 * used). */
static void used_lines(char *s, size_t len, size_t cap, const char *err)
{
	for (const char *p = err; (p = strstr(p, "used_suppression:")) && len < cap - 512;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		len += (size_t)snprintf(s + len, cap - len, "%.*s\n", (int)n, p);
		p += n;
	}
}

/* plain_supp lost under allocator i with the user's file and the
 * shipped ones, cache (a directory or "off"): what its suppressions did,
 * as one string (the JSON's list, the text's used_suppression lines,
 * the figures).  x kept where keep is given. */
static char *supp_outcome(int i, const char *cache, const char *user)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_supp", .args = H_LIST("lost"), .alloc = i, .flags = H_PRELOAD,
	       .text = "full",
	       .env = H_LIST(h_env("MEMCHECK_CACHE=%s", cache),
			     h_env("MEMCHECK_SUPPRESSIONS=%s", user)));
	const struct h_json *rec = h_rec(&x, "process");
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	len += (size_t)snprintf(s + len, cap - len, "%s suppressed %s/%s lost %s reachable %s\n",
				h_str(rec, "verdict"), h_fmt(h_count(rec, "suppressed", "bytes")),
				h_fmt(h_count(rec, "suppressed", "blocks")),
				h_fmt(h_count(rec, "definitely_lost", "bytes")),
				h_fmt(h_count(rec, "still_reachable", "bytes")));
	const struct h_json *list = h_json_get(rec, "suppressions");
	for (size_t k = 0; list && k < list->n && len < cap - 512; k++) {
		const struct h_json *u = h_json_at(list, k);
		len += (size_t)snprintf(s + len, cap - len, "%s %s:%s %s %s %s\n", h_str(u, "name"),
					h_str(u, "file"), h_fmt(h_u64(u, "line")),
					h_fmt(h_u64(u, "records")), h_fmt(h_u64(u, "blocks")),
					h_fmt(h_u64(u, "bytes")));
	}
	used_lines(s, len, cap, x.r.err);
	h_res_free(&x);
	return s;
}

/* The cache's file in dir's versioned directory whose name begins
 * supp- and (verdicts) is a program's verdict file, supp-HASH-PROG.v,
 * or (!verdicts) the set's, supp-HASH; or NULL. */
static const char *supp_cache_kind(const char *dir, bool verdicts)
{
	DIR *d = opendir(dir);
	const char *sub = NULL, *found = NULL;
	for (struct dirent *e; d && (e = readdir(d));)
		if (strncmp(e->d_name, "v1-", 3) == 0)
			sub = h_env("%s/%s", dir, e->d_name);
	if (d)
		closedir(d);
	d = sub ? opendir(sub) : NULL;
	for (struct dirent *e; d && (e = readdir(d));)
		if (strncmp(e->d_name, "supp-", 5) == 0 &&
		    (verdicts ? strchr(e->d_name + 5, '-') && strstr(e->d_name, ".v") &&
				!strstr(e->d_name, ".tmp.")
			      : !strchr(e->d_name, '.')))
			found = h_env("%s/%s", sub, e->d_name);
	if (d)
		closedir(d);
	return found;
}

static const char *supp_cache_file(const char *dir)
{
	return supp_cache_kind(dir, false);
}

/* The one program's verdict file in dir (suppcache.c), or NULL. */
static const char *verdict_file(const char *dir)
{
	return supp_cache_kind(dir, true);
}

/* The sum of dir's set (its file's header, at 32), which the verdict
 * records are stamped with. */
static uint64_t set_sum(const char *dir)
{
	const char *f = supp_cache_file(dir);
	ck_assert_ptr_nonnull(f);
	size_t len;
	char *s = h_read_file(f, &len);
	ck_assert_msg(s && len >= 40, "%s: no set", f);
	uint64_t set;
	memcpy(&set, s + 32, 8);
	free(s);
	return set;
}

static const char *copy_of_supp_file(void)
{
	char *t = h_read_file(supp_file(), NULL);
	ck_assert_ptr_nonnull(t);
	const char *p = write_tmp("user.supp", t);
	free(t);
	return p;
}

/* Cold (the files parsed, the cache written) and warm (read from it):
 * the same outcome as without a cache, under every allocator. */
START_TEST(cache_cold_warm_same)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *off = supp_outcome(_i, "off", user);
	ck_assert_msg(strstr(off, "lost-from-main"), "%s", off);
	char *cold = supp_outcome(_i, dir, user);
	const char *f = supp_cache_file(dir);
	ck_assert_msg(f, "no suppressions cached in %s", dir);
	struct stat st0, st1;
	ck_assert(stat(f, &st0) == 0 && (st0.st_mode & 0777) == 0600);
	char *warm = supp_outcome(_i, dir, user);
	ck_assert_str_eq(cold, off);
	ck_assert_str_eq(warm, off);
	/* warm, the cache is read, not written again */
	ck_assert(stat(f, &st1) == 0 && st1.st_ino == st0.st_ino);
	free(off);
	free(cold);
	free(warm);
}
END_TEST

/* memcheck-cache(5)'s checksum: over the set after the file's 40-byte
 * header (to the image's end; verdict records follow it), in 8-byte
 * words, stored at offset 32. */
static size_t supp_cache_set_len(const unsigned char *s, size_t len)
{
	uint32_t keylen;
	uint64_t notes, image;
	ck_assert(len >= 40);
	memcpy(&keylen, s + 8, 4);
	memcpy(&notes, s + 16, 8);
	memcpy(&image, s + 24, 8);
	size_t img = (40 + ((keylen + 7) & ~7u) + notes + 15) & ~(size_t)15;
	ck_assert(img + image <= len);
	return img + image;
}

static void supp_cache_resum(unsigned char *s, size_t len)
{
	len = supp_cache_set_len(s, len);
	uint64_t h = 0xcbf29ce484222325ull ^ (len - 40);
	for (size_t i = 40; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	memcpy(s + 32, &h, 8);
}

static void put_file(const char *path, const char *s, size_t len)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s, 1, len, f), len);
	fclose(f);
}

/* The cache is what a warm process reads (a name changed in it, its
 * checksum mended, is reported); a damaged one (bytes flipped, cut
 * short, emptied) is not: the files are parsed again, the cache
 * written again.  Each run without the program's verdicts: with them,
 * its summary and names, a warm exit reads no set file at all. */
static void drop_verdicts(const char *dir)
{
	const char *v = verdict_file(dir);
	ck_assert_msg(v && unlink(v) == 0, "no verdicts' file in %s", dir);
}

START_TEST(cache_read_and_damage)
{
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *off = supp_outcome(H_GLIBC, "off", user);
	free(supp_outcome(H_GLIBC, dir, user));
	const char *f = supp_cache_file(dir);
	ck_assert_ptr_nonnull(f);
	size_t len;
	unsigned char *s = (unsigned char *)h_read_file(f, &len);
	ck_assert(s && len > 40);
	unsigned char *good = malloc(len);
	memcpy(good, s, len);
	unsigned char *m = memmem(s, len, "lost-from-main", 14);
	ck_assert_ptr_nonnull(m);
	memcpy(m, "lost-from-MAIN", 14);
	supp_cache_resum(s, len);
	put_file(f, (char *)s, len);
	drop_verdicts(dir);
	char *doctored = supp_outcome(H_GLIBC, dir, user);
	ck_assert_msg(strstr(doctored, "lost-from-MAIN"), "the cache unread:\n%s", doctored);
	free(doctored);
	for (int harm = 0; harm < 4; harm++) {
		memcpy(s, good, len);
		size_t n = len;
		if (harm == 0)        /* a name changed, the checksum not */
			memcpy(m, "lost-from-MAIN", 14);
		else if (harm == 1)   /* bytes flipped all over */
			for (size_t k = 3; k < len; k += 5)
				s[k] ^= 0x5a;
		else if (harm == 2)   /* cut short */
			n = len / 2;
		else                  /* empty */
			n = 0;
		put_file(f, (char *)s, n);
		drop_verdicts(dir);
		char *again = supp_outcome(H_GLIBC, dir, user);
		ck_assert_msg(strcmp(again, off) == 0, "harm %d:\n%s---\n%s", harm, again, off);
		free(again);
		size_t len2;
		char *now = h_read_file(f, &len2);
		/* the set as it was (the verdict records after it are
		 * stamped with the new file's inode) */
		size_t set = supp_cache_set_len(good, len);
		ck_assert_msg(now && len2 >= set && memcmp(now, good, set) == 0,
			      "harm %d: the cache not written again", harm);
		free(now);
	}
	free(s);
	free(good);
	free(off);
}
END_TEST

/* A user's file edited after it was cached: the same size with a new
 * mtime, then a new size: parsed again, its new names reported. */
START_TEST(cache_edited_file)
{
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *before = supp_outcome(H_GLIBC, dir, user);
	free(supp_outcome(H_GLIBC, dir, user));
	ck_assert_ptr_nonnull(supp_cache_file(dir));
	ck_assert(strstr(before, "lost-from-main"));
	size_t len;
	char *t = h_read_file(user, &len);
	char *m = strstr(t, "lost-from-main");
	ck_assert_ptr_nonnull(m);
	memcpy(m, "lost-from-MAIN", 14);     /* the same size */
	put_file(user, t, len);
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 1000000000, 123 } };
	ck_assert(utimensat(AT_FDCWD, user, times, 0) == 0);
	char *same = supp_outcome(H_GLIBC, dir, user);
	ck_assert_msg(strstr(same, "lost-from-MAIN") && !strstr(same, "lost-from-main"),
		      "same size, new mtime: not parsed again\n%s", same);
	free(same);
	/* a new size: the name longer, its line the same */
	char *m2 = malloc(len + 8);
	size_t head = (size_t)(m - t);
	memcpy(m2, t, head);
	memcpy(m2 + head, "lost-from-main-2", 16);
	memcpy(m2 + head + 16, m + 14, len - head - 14);
	put_file(user, m2, len + 2);
	char *bigger = supp_outcome(H_GLIBC, dir, user);
	ck_assert_msg(strstr(bigger, "lost-from-main-2 "), "new size: not parsed again\n%s", bigger);
	free(bigger);
	char *warm = supp_outcome(H_GLIBC, dir, user);
	ck_assert_msg(strstr(warm, "lost-from-main-2 "), "warm after the edit\n%s", warm);
	free(warm);
	free(m2);
	free(t);
	free(before);
}
END_TEST

/* ---- verdicts kept in a program's file beside the set's (suppcache.c, memcheck-cache(5)) ---- */

static uint64_t cache_sum(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/* cache_sum, then each byte after the last whole word */
static uint64_t cache_sum_tail(const unsigned char *p, size_t n)
{
	uint64_t h = cache_sum(p, n);
	for (size_t i = n & ~(size_t)7; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* A record's checksum: over its 56-byte head (the checksum, at 48, as
 * 0), then over its links (after its key); a summary's and a name's
 * (MCVS, MCVN) over their key too. */
static uint64_t verdict_sum(const unsigned char *r, uint32_t len)
{
	unsigned char head[56];
	uint32_t keylen, linkslen;
	memcpy(head, r, 56);
	memset(head + 48, 0, 8);
	memcpy(&keylen, r + 32, 4);
	memcpy(&linkslen, r + 36, 4);
	ck_assert(keylen <= len - 56 && linkslen <= len - 56 - keylen);
	uint64_t sum = cache_sum_tail(head, 56) ^ cache_sum_tail(r + 56 + keylen, linkslen) * 31;
	uint32_t magic;
	memcpy(&magic, r, 4);
	if (magic != 0x5256434dU)
		sum ^= cache_sum_tail(r + 56, keylen) * 17;
	return sum;
}

/* The verdict records of a program's verdict file (s, len bytes), every
 * one whole, its checksum holding, stamped with the set's sum, up to the
 * file's end; how many.  *first_suppressing: the offset of the first
 * whose verdict is an entry (SIZE_MAX: none). */
static size_t verdict_records(uint64_t set, const unsigned char *s, size_t len,
			      size_t *first_suppressing)
{
	size_t at = 0, n = 0;
	uint64_t ino = 0;
	if (first_suppressing)
		*first_suppressing = SIZE_MAX;
	while (at < len) {
		uint32_t magic, rlen;
		uint64_t rset, rino, check;
		int32_t verdict;
		ck_assert_msg(len - at >= 56, "a record cut short at %zu of %zu", at, len);
		memcpy(&magic, s + at, 4);
		memcpy(&rlen, s + at + 4, 4);
		memcpy(&rset, s + at + 8, 8);
		memcpy(&rino, s + at + 16, 8);
		memcpy(&verdict, s + at + 40, 4);
		memcpy(&check, s + at + 48, 8);
		/* verdicts, and the set's summary and names beside them */
		bool kind = magic == 0x5256434dU || magic == 0x5356434dU || magic == 0x4e56434dU;
		ck_assert_msg(kind && rlen % 8 == 0 && rlen >= 56 &&
			      rlen <= len - at, "a record damaged at %zu of %zu", at, len);
		ck_assert_msg(check == verdict_sum(s + at, rlen), "record at %zu: checksum", at);
		ck_assert_msg(rset == set, "record at %zu: another set's", at);
		if (!ino)
			ino = rino;
		ck_assert_msg(rino == ino, "record at %zu: another file's", at);
		if (magic != 0x5256434dU) {
			at += rlen;
			continue;
		}
		if (first_suppressing && *first_suppressing == SIZE_MAX && verdict >= 0)
			*first_suppressing = at;
		n++;
		at += rlen;
	}
	return n;
}

/* Verdicts: a cold run keeps them, a warm one reads them (one doctored,
 * its checksum mended, shows) and keeps nothing new; the file copied to
 * a new inode, its records (the doctored one too) are skipped; a torn
 * record at the end harms nothing; an entry put before the one that
 * matched changes the verdict. */
START_TEST(cache_verdicts_kept_and_read)
{
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *off = supp_outcome(H_GLIBC, "off", user);
	char *cold = supp_outcome(H_GLIBC, dir, user);
	const char *f = verdict_file(dir), *setf = supp_cache_file(dir);
	ck_assert_ptr_nonnull(f);
	size_t len, len2, at;
	unsigned char *s = (unsigned char *)h_read_file(f, &len);
	ck_assert_ptr_nonnull(s);
	size_t n = verdict_records(set_sum(dir), s, len, &at);
	ck_assert_msg(n > 0 && at != SIZE_MAX, "%zu verdicts kept after a cold run", n);
	char *warm = supp_outcome(H_GLIBC, dir, user);
	ck_assert_str_eq(cold, off);
	ck_assert_str_eq(warm, off);
	char *t = h_read_file(f, &len2);
	ck_assert_msg(len2 == len && memcmp(t, s, len) == 0, "a warm run wrote verdicts");
	free(t);
	/* an entry's verdict made "none": the record shows */
	int32_t none = -1;
	memcpy(s + at + 40, &none, 4);
	uint32_t rlen;
	memcpy(&rlen, s + at + 4, 4);
	uint64_t check = verdict_sum(s + at, rlen);
	memcpy(s + at + 48, &check, 8);
	put_file(f, (char *)s, len);
	char *doctored = supp_outcome(H_GLIBC, dir, user);
	ck_assert_msg(strcmp(doctored, off) != 0, "the doctored verdict unread:\n%s", doctored);
	free(doctored);
	/* the set's file copied to a new inode (as a rename over it would
	 * leave it), and the set's summary dropped from the verdicts' file
	 * (with it, a warm exit reads no set file: the summary's notes
	 * hold, and its records are the summary's set's): the verdicts'
	 * records another file's, skipped, the verdicts reached again and
	 * kept after them; then a torn record at the end, as a full disk
	 * leaves one */
	const char *copy = h_env("%s.copy", setf);
	t = h_read_file(setf, &len);
	put_file(copy, t, len);
	free(t);
	ck_assert(rename(copy, setf) == 0);
	t = h_read_file(f, &len);
	size_t kept = 0;
	for (size_t r = 0; r + 8 <= len;) {
		uint32_t magic, l;
		memcpy(&magic, t + r, 4);
		memcpy(&l, t + r + 4, 4);
		ck_assert(l >= 56 && l <= len - r);
		if (magic != 0x5356434dU) {
			memmove(t + kept, t + r, l);
			kept += l;
		}
		r += l;
	}
	ck_assert_msg(kept < len, "no summary of the set in the verdicts' file");
	put_file(f, t, kept);
	free(t);
	free(h_read_file(f, &len));
	char *moved = supp_outcome(H_GLIBC, dir, user);
	ck_assert_str_eq(moved, off);
	free(moved);
	t = h_read_file(f, &len2);
	ck_assert_msg(len2 > len, "no verdicts kept after the foreign ones");
	FILE *tf = fopen(f, "a");
	ck_assert_ptr_nonnull(tf);
	ck_assert_uint_eq(fwrite(s + at, 1, 40, tf), 40);   /* a record's first 40 bytes */
	fclose(tf);
	char *torn = supp_outcome(H_GLIBC, dir, user);
	ck_assert_str_eq(torn, off);
	free(torn);
	free(t);
	/* an entry before lost-from-main that matches its records */
	char *u = h_read_file(user, NULL);
	ck_assert_ptr_nonnull(u);
	const char *first = "{\n   first-now\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
			    "   ...\n   fun:main\n}\n";
	char *edited = malloc(strlen(first) + strlen(u) + 1);
	strcpy(edited, first);
	strcat(edited, u);
	put_file(user, edited, strlen(edited));
	char *off2 = supp_outcome(H_GLIBC, "off", user);
	ck_assert_msg(strstr(off2, "first-now") && !strstr(off2, "lost-from-main"), "%s", off2);
	for (int r = 0; r < 2; r++) {
		char *now = supp_outcome(H_GLIBC, dir, user);
		ck_assert_msg(strcmp(now, off2) == 0, "run %d after the edit:\n%s---\n%s", r, now,
			      off2);
		free(now);
	}
	free(off2);
	free(edited);
	free(u);
	free(s);
	free(warm);
	free(cold);
	free(off);
}
END_TEST

/* plain_supp run without "lost" with user's file: the set kept in dir
 * with the reachable records' verdicts alone; the program's verdict
 * file. */
static const char *kept_reachable(const char *dir, const char *user)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_supp", .flags = H_PRELOAD,
	       .env = H_LIST(h_env("MEMCHECK_CACHE=%s", dir), h_env("MEMCHECK_SUPPRESSIONS=%s", user)));
	h_res_free(&x);
	const char *f = verdict_file(dir);
	ck_assert_ptr_nonnull(f);
	return f;
}

/* Eight processes at once, each appending its verdicts to the same
 * file: every record whole and valid, the file read as before. */
START_TEST(cache_verdicts_concurrent)
{
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *off = supp_outcome(H_GLIBC, "off", user);
	/* the lost records' verdicts new to every one of the eight */
	const char *f = kept_reachable(dir, user);
	size_t len;
	unsigned char *s = (unsigned char *)h_read_file(f, &len);
	uint64_t set = set_sum(dir);
	size_t before = verdict_records(set, s, len, NULL);
	free(s);
	int go[2];
	ck_assert(pipe(go) == 0);
	pid_t kids[8];
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		ck_assert(kids[k] >= 0);
		if (kids[k] == 0) {
			char c;
			close(go[1]);
			(void)!read(go[0], &c, 1);   /* all at once */
			setenv("MEMCHECK_CACHE", dir, 1);
			setenv("MEMCHECK_SUPPRESSIONS", user, 1);
			setenv("MEMCHECK_TEXT", "none", 1);
			setenv("MEMCHECK_REPORT", "/dev/null", 1);
			setenv("MEMCHECK_EXITCODE", "0", 1);
			setenv("LD_PRELOAD", h_lib(), 1);
			execl(h_prog("plain_supp"), "plain_supp", "lost", (char *)NULL);
			_exit(127);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int k = 0; k < 8; k++) {
		int st;
		ck_assert(waitpid(kids[k], &st, 0) == kids[k]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d: status %d", k, st);
	}
	s = (unsigned char *)h_read_file(f, &len);
	size_t after = verdict_records(set, s, len, NULL);
	/* (those that started after another's append found its records) */
	ck_assert_msg(after > before, "%zu verdicts before, %zu after eight runs", before, after);
	free(s);
	char *warm = supp_outcome(H_GLIBC, dir, user);
	ck_assert_str_eq(warm, off);
	free(warm);
	free(off);
}
END_TEST

/* A file past 256 KiB takes no more verdicts (every process reads it
 * whole): one grown so by a foreign record (another set's, skipped) is
 * left as it is, the outcome the same. */
START_TEST(cache_verdicts_capped)
{
	const char *dir = h_tmppath("cache"), *user = copy_of_supp_file();
	char *off = supp_outcome(H_GLIBC, "off", user);
	const char *f = kept_reachable(dir, user);
	size_t big = 256 << 10, len, len2;
	unsigned char *r = calloc(1, big);
	ck_assert_ptr_nonnull(r);
	uint32_t magic = 0x5256434dU, rlen = (uint32_t)big;
	memcpy(r, &magic, 4);
	memcpy(r + 4, &rlen, 4);
	FILE *tf = fopen(f, "a");
	ck_assert_ptr_nonnull(tf);
	ck_assert_uint_eq(fwrite(r, 1, big, tf), big);
	fclose(tf);
	free(r);
	free(h_read_file(f, &len));
	char *now = supp_outcome(H_GLIBC, dir, user);   /* lost: new stacks */
	ck_assert_str_eq(now, off);
	free(h_read_file(f, &len2));
	ck_assert_msg(len2 == len, "%zu bytes -> %zu: verdicts appended past the cap", len, len2);
	free(now);
	free(off);
}
END_TEST

/* plain_supp lost under allocator i, preloaded as preload names (a
 * library's copy in a tree of its own, own_tree_via), with the cache
 * dir: its verdict and used_suppression lines (the full text). */
static char *shipped_outcome(int i, const char *preload, const char *so, const char *cache)
{
	struct h_res x;
	H_EXEC(&x, .prog = "plain_supp", .args = H_LIST("lost"), .alloc = i, .no_report = true,
	       .text = "full", .flags = H_EXITCODE,
	       .env = H_LIST(so && so[0] ? h_env("%s %s", preload, so) : preload,
			     h_env("MEMCHECK_CACHE=%s", cache)));
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	len += (size_t)snprintf(s + len, cap - len, "exit %d %s\n", x.r.exit_code,
				strstr(x.r.err, "FAIL: ") ? "FAIL" : "pass");
	used_lines(s, len, cap, x.r.err);
	h_res_free(&x);
	return s;
}

/* The shipped directory's notes (suppcache.c's notes_hold: the
 * directory opened and stat'ed, its files stat'ed by name from it): a
 * warm process takes the cache, not a parse; a file of it edited in
 * place (its size the same) and a file added to it each miss, under
 * every allocator.  A mutant that takes the directory's note without
 * its stat fails at the file added; one that stats the files by a
 * wrong name at the warm run's inode. */
START_TEST(cache_shipped_dir_changes)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	struct h_spec spec = { 0 };
	own_tree_via(&spec, shipped_text, "");
	const char *preload = spec.env[0], *dir = h_tmppath("cache");
	ck_assert(strncmp(preload, "LD_PRELOAD=", 11) == 0);
	char *off = shipped_outcome(_i, preload, so, "off");
	ck_assert_msg(strstr(off, "FAIL") && strstr(off, "used_suppression: 1 shipped "), "%s", off);
	char *cold = shipped_outcome(_i, preload, so, dir);
	const char *f = supp_cache_file(dir);
	ck_assert_msg(f, "no suppressions cached in %s", dir);
	struct stat st0, st1;
	ck_assert(stat(f, &st0) == 0);
	char *warm = shipped_outcome(_i, preload, so, dir);
	ck_assert_str_eq(cold, off);
	ck_assert_str_eq(warm, off);
	ck_assert_msg(stat(f, &st1) == 0 && st1.st_ino == st0.st_ino,
		      "warm: the set parsed and written again");
	/* a.supp edited in place, the same size, a new mtime */
	const char *a = h_env("%s/a.supp", files.dir);
	size_t len;
	char *t = h_read_file(a, &len);
	char *m = strstr(t, "shipped");
	ck_assert_ptr_nonnull(m);
	memcpy(m, "SHIPPED", 7);
	put_file(a, t, len);
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 1000000000, 321 } };
	ck_assert(utimensat(AT_FDCWD, a, times, 0) == 0);
	for (int r = 0; r < 2; r++) {
		char *edited = shipped_outcome(_i, preload, so, dir);
		ck_assert_msg(strstr(edited, "used_suppression: 1 SHIPPED ") &&
				      !strstr(edited, " shipped "),
			      "run %d after the edit:\n%s", r, edited);
		free(edited);
	}
	/* a file added beside it: the directory's note */
	static const char other[] = "{\n   other\n   Memcheck:Leak\n   fun:malloc\n   fun:lose\n"
				    "   fun:lose_other\n}\n";
	put_file(h_env("%s/b.supp", files.dir), other, sizeof other - 1);
	for (int r = 0; r < 2; r++) {
		char *added = shipped_outcome(_i, preload, so, dir);
		ck_assert_msg(strstr(added, "used_suppression: 1 other ") &&
				      strstr(added, "used_suppression: 1 SHIPPED "),
			      "run %d after a file was added:\n%s", r, added);
		free(added);
	}
	free(t);
	free(off);
	free(cold);
	free(warm);
}
END_TEST

/* A bad file is never cached: its message every time. */
START_TEST(cache_bad_file_said_each_time)
{
	const char *dir = h_tmppath("cache"), *bad = write_tmp("bad.supp", bad_text);
	for (int r = 0; r < 2; r++) {
		struct h_res x;
		H_EXEC(&x, .prog = "plain_supp", .args = H_LIST("lost"), .flags = H_PRELOAD,
		       .text = "full",
		       .env = H_LIST(h_env("MEMCHECK_CACHE=%s", dir),
				     h_env("MEMCHECK_SUPPRESSIONS=%s", bad)));
		const char *msg = h_env("suppressions not read: %s:3: unknown Memcheck "
					"suppression kind 'Leek'", bad);
		ck_assert_msg(h_count_lines(x.r.err, msg) == 1, "run %d: no '%s' in\n%s", r, msg,
			      x.r.err);
		h_res_free(&x);
	}
	ck_assert_ptr_null(supp_cache_file(dir));
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("suppress", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, cli_passes_files_on_and_generates);
	tcase_add_test(tc, test_generated_round_trip);
	tcase_add_test(tc, test_valgrinds_entries);
	tcase_add_loop_test(tc, cache_cold_warm_same, 0, H_NALLOCATORS);
	tcase_add_test(tc, cache_read_and_damage);
	tcase_add_test(tc, cache_edited_file);
	tcase_add_test(tc, cache_verdicts_kept_and_read);
	tcase_add_test(tc, cache_verdicts_concurrent);
	tcase_add_test(tc, cache_verdicts_capped);
	tcase_add_test(tc, cache_bad_file_said_each_time);
	tcase_add_loop_test(tc, cache_shipped_dir_changes, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
