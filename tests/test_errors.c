/*
 * test_errors.c - heap errors and bad configuration: a double free is
 * reported with both stacks and kept from glibc; a free of a pointer
 * memcheck never saw is reported and passed on; realloc likewise; a free or
 * realloc of a pointer inside a live block is reported as such, kept from
 * every allocator and fails the region; calls from a signal handler that
 * interrupted memcheck are counted exactly and invent no heap error
 * (tests/prog/signals, plain_sigtimer); blocks of memcheck's own heap
 * the program frees are no heap error (tests/prog/ownheap_free); an unusable
 * MEMCHECK_REPORT or a bad MEMCHECK_* value costs one line on stderr and
 * changes nothing else (tests/prog/plain_errors, tests/prog/regions).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* plain_errors MODE preloaded (after the row's allocators' libraries),
 * memcheck's text at its default: the program must go on, printing
 * what it prints without the error. */
#define PLAIN_ERRORS(mode)                                                     \
	.run = { .prog = "plain_errors", .args = H_LIST(mode), .flags = H_PRELOAD, .text = "" }

H_CHECK(double_free_said)
{
	ck_assert_msg(h_count_lines(x->r.err, "main (") >= 3,
		      "%s: expected the three stacks (now, freed, allocated) to start in main:\n%s",
		      x->label, x->r.err);
	ck_assert_msg(h_violation_has(rec, "double free"), "%s: no violation mentioning \"double "
		      "free\"", x->label);
}

/* Issue 14, item 4: free(p + 16) of a live block was "never saw
 * allocated", passed on, and jemalloc and tcmalloc crashed in the exit
 * report.  Under each allocator: reported with the block, withheld, the
 * program goes on, and the block's own free is counted.  (The process
 * region also has what the allocator's and libstdc++'s start-up
 * allocated: no exact allocs here.) */
H_CHECK(interior_withheld)
{
	uint64_t reallocs = strcmp(c->run.args[0], "realloc_interior") == 0;
	ck_assert_msg(h_u64(rec, "reallocs") >= reallocs, "%s: no realloc counted", x->label);
	ck_assert_msg(h_violation_has(rec, "1 frees of pointers inside live blocks"),
		      "%s: no violation for the pointer inside a block", x->label);
}
#define INTERIOR(mode, out, said)                                              \
	{ mode " withheld from the allocator", PLAIN_ERRORS(mode), .stdout_is = out, \
	  .err_lines = { { said, 1 } },                                          \
	  .err = H_LIST("16 bytes inside a block of 40 bytes", "allocated at"),  \
	  .want = { { "invalid_frees", 1 }, { "double_frees", 0 }, { "verdict", .str = "fail" } }, \
	  .check = interior_withheld }

/* "allocs=N frees=M ..." on a program's output: the figure after key. */
static uint64_t said(const char *text, const char *key)
{
	const char *s = strstr(text, key);
	ck_assert_msg(s != NULL, "no \"%s\" in \"%s\"", key, text);
	return strtoull(s + strlen(key), NULL, 10);
}

/* Issue 14, item 5: a handler's malloc while its thread was inside
 * memcheck went uncounted, and the block the allocator handed it back
 * was a "double free" at its next free.  Raised where memcheck calls
 * getpid() with its guard up (never inside the allocator), under each
 * allocator: the region's figures are the program's own count. */
H_CHECK(counted_as_the_program_counts)
{
	ck_assert_msg(said(x->r.out, "handled=") == 7, "%s: the handler ran %llu times, expected 7",
		      x->label, (unsigned long long)said(x->r.out, "handled="));
	H_EXPECT_U64(rec, "allocs", said(x->r.out, "allocs="));
	H_EXPECT_U64(rec, "frees", said(x->r.out, "frees="));
	H_EXPECT_U64(rec, "reallocs", said(x->r.out, "reallocs="));
}

/* The issue's own case: a timer's handler allocating wherever the
 * program is, under mimalloc, which survives that bare (glibc aborts,
 * tcmalloc crashes, jemalloc may deadlock on its own lock).  Exact
 * counts; a double free only where mimalloc handed out a live block
 * twice, which the program counts itself. */
H_CHECK(timer_counted)
{
	uint64_t dups = said(x->r.err, "dups=");
	H_EXPECT_U64(rec, "allocs", said(x->r.err, "allocs="));
	ck_assert_msg(h_u64(rec, "double_frees") <= dups,
		      "%s: %llu double frees, but mimalloc handed out a live block again only %llu "
		      "times", x->label, (unsigned long long)h_u64(rec, "double_frees"),
		      (unsigned long long)dups);
	if (dups == 0)
		H_EXPECT_U64(rec, "frees", said(x->r.err, "frees="));
}

static const struct h_case cases[] = {
	/* the second free must not reach glibc, which aborts */
	{ "a double free reported, the program goes on", PLAIN_ERRORS("double"),
	  .allocators = H_ONLY(H_GLIBC), .stdout_is = "continued\n",
	  .err = H_LIST("double free", "freed at", "allocated at"), .check = double_free_said,
	  .want = { { "double_frees", 1 }, { "allocs", 1 }, { "frees", 1 },
		    { "verdict", .str = "fail" } } },
	/* the ring of recent frees, read back across its pages and its wrap:
	 * the first twenty shown, each with its block's size */
	{ "double frees found in the ring of recent frees", PLAIN_ERRORS("double_ring"),
	  .allocators = H_ONLY(H_GLIBC), .stdout_is = "continued\n",
	  .err = H_LIST("double free in", "(264 bytes)", "(256 bytes)", "(112 bytes)"),
	  .no_err = H_LIST("never saw", "(104 bytes)"),
	  .want = { { "double_frees", 16000 }, { "invalid_frees", 0 }, { "frees", 20000 },
		    { "verdict", .str = "fail" } } },
	/* mi_malloc is not wrapped: memcheck sees only the free(), which
	 * it passes on to mimalloc */
	{ "a free of an unknown pointer reported and passed on", PLAIN_ERRORS("unknown"),
	  .allocators = H_ONLY(H_MIMALLOC), .stdout_is = "continued\n", .err = H_LIST("never saw"),
	  .want = { { "invalid_frees", 1 }, { "frees", 0 }, { "allocs", 0 } } },
	/* tracking's own realloc path: the block memcheck saw freed is
	 * kept from the allocator, and realloc fails as it would for no
	 * memory (NULL, ENOMEM) */
	{ "a realloc of a freed block reported and failed", PLAIN_ERRORS("realloc_freed"),
	  .allocators = H_ONLY(H_GLIBC), .stdout_is = "NULL ENOMEM\ncontinued\n",
	  .err_lines = { { "realloc of a freed block", 1 } }, .err = H_LIST("freed at", "allocated at"),
	  .want = { { "double_frees", 1 }, { "reallocs", 1 }, { "allocs", 1 }, { "frees", 1 },
		    { "verdict", .str = "fail" } } },
	/* passed on to mimalloc, contents moved; the new block is
	 * memcheck's to track: allocated, then freed */
	{ "a realloc of an unknown pointer reported and passed on", PLAIN_ERRORS("realloc_unknown"),
	  .allocators = H_ONLY(H_MIMALLOC), .stdout_is = "continued\n",
	  .err_lines = { { "realloc of a pointer memcheck never saw", 1 } },
	  .want = { { "invalid_frees", 1 }, { "reallocs", 1 }, { "allocs", 1 }, { "frees", 1 },
		    { "bytes_allocated", 64 } } },
	INTERIOR("interior", "continued\n", "free of a pointer inside a live block"),
	INTERIOR("realloc_interior", "NULL ENOMEM\ncontinued\n",
		 "realloc of a pointer inside a live block"),
	{ "a signal handler inside memcheck counted",
	  .run = { .prog = "signals", .flags = H_PRELOAD, .text = "summary" }, .record = "all",
	  .no_err = H_LIST("double free", "never saw"), .check = counted_as_the_program_counts,
	  .want = { { "double_frees", 0 }, { "invalid_frees", 0 }, { "live_blocks", 0 } } },
	/* the dynamic linker's lists made while memcheck loaded libdw (its
	 * guard held: memcheck's own heap), grown and freed in the
	 * program's dlopen: memcheck's blocks go back to it, no heap error,
	 * none to the allocator (which would crash on them) */
	{ "blocks of memcheck's own heap freed by the program",
	  .run = { .prog = "ownheap_free", .flags = H_PRELOAD }, .stdout_is = "done\n",
	  .no_err = H_LIST("never saw", "double free"),
	  .want = { { "double_frees", 0 }, { "invalid_frees", 0 } } },
	{ "a signal timer under mimalloc", .allocators = H_ONLY(H_MIMALLOC),
	  .run = { .prog = "plain_sigtimer", .args = H_LIST("0.5"), .flags = H_PRELOAD },
	  .want = { { "invalid_frees", 0 }, { "live_blocks", 0 } }, .check = timer_counted },
};

/* A report path inside a directory that does not exist. */
static const char *missing_report(void)
{
	return h_env("MEMCHECK_REPORT=%s/r.jsonl", h_tmppath("no-such-dir"));
}

START_TEST(test_report_in_missing_directory_one_line)
{
	/* plain_errors leak 3: leaks, exits 3 */
	struct h_res bare, x;
	H_EXEC(&bare, .prog = "plain_errors", .args = H_LIST("leak", "3"), .no_report = true,
	       .text = "");
	H_EXEC(&x, .prog = "plain_errors", .args = H_LIST("leak", "3"), .flags = H_PRELOAD,
	       .env = H_LIST(missing_report()), .no_report = true, .text = "");
	ck_assert_msg(x.r.exit_code == 3 && bare.r.exit_code == 3,
		      "exit status %s under memcheck (%s bare), expected exit 3 as without it",
		      h_status(&x.r), h_status(&bare.r));
	ck_assert_msg(strcmp(x.r.out, bare.r.out) == 0, "stdout changed: \"%s\" vs \"%s\"",
		      x.r.out, bare.r.out);
	ck_assert_msg(h_count_lines(x.r.err, "MEMCHECK_REPORT") == 1,
		      "expected one line about MEMCHECK_REPORT on stderr, got %d:\n%s",
		      h_count_lines(x.r.err, "MEMCHECK_REPORT"), x.r.err);
	ck_assert_msg(h_count_lines(x.r.err, "No such file or directory") == 1,
		      "the line should say why (No such file or directory):\n%s", x.r.err);
	h_res_free(&bare);
	h_res_free(&x);
}
END_TEST

/* The "cannot open MEMCHECK_REPORT" line comes once per process, not
 * once per region (a suite of N tests would print N copies).  Here:
 * regions "nested" under preload ends 3 regions (inner, outer, process). */
START_TEST(test_report_in_missing_directory_one_line_for_many_regions)
{
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely lost,
	 * which is what these cases check (the program still holds them, so
	 * the scan would call them still reachable); test_leakkinds tests the
	 * kinds. */
	struct h_res x;
	H_EXEC(&x, .prog = "regions", .args = H_LIST("nested"), .flags = H_PRELOAD,
	       .env = H_LIST(missing_report(), "MEMCHECK_SCAN=0"), .no_report = true);
	h_expect_exit(&x, 0);
	ck_assert_msg(h_count_lines(x.r.err, "MEMCHECK_REPORT") == 1,
		      "expected one line about MEMCHECK_REPORT for the process, got %d "
		      "(one per region):\n%s", h_count_lines(x.r.err, "MEMCHECK_REPORT"), x.r.err);
	h_res_free(&x);
}
END_TEST

static const struct {
	const char *var, *value;
	const char *expected[4]; /* words the line must hold: the range or choices */
} bad_values[] = {
	{ "MEMCHECK_STACK_DEPTH", "abc", { "0", "64" } },
	{ "MEMCHECK_STACK_DEPTH", "65", { "0", "64" } },
	{ "MEMCHECK_STACK_DEPTH", "-1", { "0", "64" } },
	{ "MEMCHECK_STACK_DEPTH", "12x", { "0", "64" } },
	/* spaces, before or after: one rule (issue 14, item 13) */
	{ "MEMCHECK_STACK_DEPTH", " 8", { "0", "64" } },
	{ "MEMCHECK_STACK_DEPTH", "8 ", { "0", "64" } },
	{ "MEMCHECK_UNWINDER", "frame", { "fp", "libunwind", "glibc" } },
	{ "MEMCHECK_TRACK", "maybe", { "0", "1" } },
};

/* The first line of text that holds needle, as a new string. */
static char *line_with(const char *text, const char *needle)
{
	const char *hit = strstr(text, needle);
	if (!hit)
		return NULL;
	const char *start = hit, *end = strchr(hit, '\n');
	while (start > text && start[-1] != '\n')
		start--;
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

START_TEST(test_bad_option_value_one_line_default_used)
{
	const char *var = bad_values[_i].var, *val = bad_values[_i].value;
	struct h_res x;
	H_EXEC(&x, .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD,
	       .env = H_LIST(h_env("%s=%s", var, val)));
	h_expect_exit(&x, 0);
	ck_assert_msg(h_count_lines(x.r.err, var) == 1 && h_count_lines(x.r.err, "") == 1,
		      "%s=%s: expected one line on stderr, naming %s; got:\n%s", var, val,
		      var, x.r.err);
	char *line = line_with(x.r.err, var);
	for (int k = 0; k < 4 && bad_values[_i].expected[k]; k++)
		ck_assert_msg(strstr(strstr(line, var) + strlen(var), bad_values[_i].expected[k]) != NULL,
			      "%s=%s: the line should say what is expected (%s):\n%s", var, val,
			      bad_values[_i].expected[k], line);
	free(line);
	/* the defaults are in force: tracked, 16 frames, fp unwinder */
	const struct h_json *rec = h_rec(&x, "process");
	ck_assert_msg(h_nleaks(rec) == 1, "%s=%s: %zu leak records, expected 1", var, val,
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "leak_here");
	H_EXPECT_FRAME(rec, 0, 1, "leak_level2");
	H_EXPECT_FRAME(rec, 0, 2, "leak_level1");
	H_EXPECT_FRAME(rec, 0, 3, "main");
	h_res_free(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("errors", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, test_report_in_missing_directory_one_line);
	tcase_add_test(tc, test_report_in_missing_directory_one_line_for_many_regions);
	tcase_add_loop_test(tc, test_bad_option_value_one_line_default_used, 0,
			    (int)(sizeof bad_values / sizeof bad_values[0]));
	return h_run_suite(NULL);
}
