/*
 * test_errors.c - heap errors and bad configuration: a double free is
 * reported with both stacks and kept from glibc; a free of a pointer
 * memcheck never saw is reported and passed on; realloc likewise; a free or
 * realloc of a pointer inside a live block is reported as such, kept from
 * every allocator and fails the region; calls from a signal handler that
 * interrupted memcheck are counted exactly and invent no heap error
 * (tests/prog/signals, plain_sigtimer); an unusable
 * MEMCHECK_REPORT or a bad MEMCHECK_* value costs one line on stderr and
 * changes nothing else (tests/prog/plain_errors, tests/prog/regions).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* plain_errors MODE preloaded, after the allocator lib when not NULL,
 * with a report: it must exit 0 printing want; returns its "process"
 * record (r and rep to free). */
static const struct h_json *run_errors(struct h_run *r, struct h_report *rep, const char *lib,
				       const char *mode, const char *want, const char *why)
{
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), NULL };
	H_RUN(r, H_PRELOAD, lib, env, h_prog("plain_errors"), mode);
	ck_assert_msg(r->exit_code == 0 && strcmp(r->out, want) == 0,
		      "plain_errors %s: %s, stdout \"%s\"; expected exit 0 and \"%s\" (%s); "
		      "stderr:\n%s", mode, h_status(r), r->out, want, why, r->err);
	H_LOAD(rep, report);
	const struct h_json *rec = h_record(rep, "process", r->pid);
	ck_assert_msg(rec != NULL, "plain_errors %s: no \"process\" record", mode);
	return rec;
}

START_TEST(test_double_free_reported_and_program_continues)
{
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_errors(&r, &rep, NULL, "double", "continued\n",
					      "the second free must not reach glibc, which aborts");
	ck_assert_msg(h_count_lines(r.err, "double free") >= 1, "no \"double free\" on stderr:\n%s",
		      r.err);
	ck_assert_msg(strstr(r.err, "freed at") && strstr(r.err, "allocated at"),
		      "stderr should show where the block was freed and allocated:\n%s", r.err);
	ck_assert_msg(h_count_lines(r.err, "main (") >= 3,
		      "expected the three stacks (now, freed, allocated) to start in main:\n%s",
		      r.err);
	H_EXPECT_U64(rec, "double_frees", 1);
	H_EXPECT_U64(rec, "allocs", 1);
	H_EXPECT_U64(rec, "frees", 1);
	H_EXPECT_STR(rec, "verdict", "fail");
	ck_assert_msg(h_violation_has(rec, "double free"), "no violation mentioning \"double free\"");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_free_of_unknown_pointer_reported_and_passed_on)
{
	/* mi_malloc is not wrapped: memcheck sees only the free() */
	const char *mi;
	if (!h_allocator(H_MIMALLOC, &mi))
		return;
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_errors(&r, &rep, mi, "unknown", "continued\n",
					      "the free passed on to mimalloc");
	ck_assert_msg(strstr(r.err, "never saw") != NULL,
		      "stderr should report a free of a pointer memcheck never saw:\n%s", r.err);
	H_EXPECT_U64(rec, "invalid_frees", 1);
	H_EXPECT_U64(rec, "frees", 0);
	H_EXPECT_U64(rec, "allocs", 0);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_realloc_of_freed_block_reported_and_fails)
{
	/* tracking's own realloc path: the block memcheck saw freed is kept
	 * from the allocator, and realloc fails as it would for no memory */
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_errors(&r, &rep, NULL, "realloc_freed",
					      "NULL ENOMEM\ncontinued\n",
					      "realloc NULL with ENOMEM, glibc never sees the block");
	ck_assert_msg(h_count_lines(r.err, "realloc of a freed block") == 1,
		      "expected one \"realloc of a freed block\" on stderr:\n%s", r.err);
	ck_assert_msg(strstr(r.err, "freed at") && strstr(r.err, "allocated at"),
		      "stderr should show where the block was freed and allocated:\n%s", r.err);
	H_EXPECT_U64(rec, "double_frees", 1);
	H_EXPECT_U64(rec, "reallocs", 1);
	H_EXPECT_U64(rec, "allocs", 1);
	H_EXPECT_U64(rec, "frees", 1);
	H_EXPECT_STR(rec, "verdict", "fail");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

START_TEST(test_realloc_of_unknown_pointer_reported_and_passed_on)
{
	const char *mi;
	if (!h_allocator(H_MIMALLOC, &mi))
		return;
	struct h_run r;
	struct h_report rep;
	const struct h_json *rec = run_errors(&r, &rep, mi, "realloc_unknown", "continued\n",
					      "passed on to mimalloc, contents moved");
	ck_assert_msg(h_count_lines(r.err, "realloc of a pointer memcheck never saw") == 1,
		      "expected one \"realloc of a pointer memcheck never saw\" on stderr:\n%s",
		      r.err);
	/* the new block is memcheck's to track: allocated, then freed */
	H_EXPECT_U64(rec, "invalid_frees", 1);
	H_EXPECT_U64(rec, "reallocs", 1);
	H_EXPECT_U64(rec, "allocs", 1);
	H_EXPECT_U64(rec, "frees", 1);
	H_EXPECT_U64(rec, "bytes_allocated", 64);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 4: free(p + 16) of a live block was "never saw
 * allocated", passed on, and jemalloc and tcmalloc crashed in the exit
 * report.  Under each allocator: reported with the block, withheld, the
 * program goes on, and the block's own free is counted. */
START_TEST(test_free_inside_live_block_withheld)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	static const struct {
		const char *mode, *out, *said;
		uint64_t reallocs;
	} c[] = {
		{ "interior", "continued\n", "free of a pointer inside a live block", 0 },
		{ "realloc_interior", "NULL ENOMEM\ncontinued\n",
		  "realloc of a pointer inside a live block", 1 },
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		struct h_run r;
		struct h_report rep;
		const struct h_json *rec = run_errors(&r, &rep, so, c[k].mode, c[k].out,
						      "the pointer must not reach the allocator");
		ck_assert_msg(h_count_lines(r.err, c[k].said) == 1 &&
			      strstr(r.err, "16 bytes inside a block of 40 bytes") &&
			      strstr(r.err, "allocated at"),
			      "%s under %s: expected \"%s\", the offset and the block's stack "
			      "on stderr:\n%s", c[k].mode, h_allocators[_i].name, c[k].said, r.err);
		/* (The process region also has what the allocator's and
		 * libstdc++'s start-up allocated: no exact allocs here.) */
		H_EXPECT_U64(rec, "invalid_frees", 1);
		H_EXPECT_U64(rec, "double_frees", 0);
		ck_assert_msg(h_u64(rec, "reallocs") >= c[k].reallocs, "%s: no realloc counted",
			      c[k].mode);
		H_EXPECT_STR(rec, "verdict", "fail");
		ck_assert_msg(h_violation_has(rec, "1 frees of pointers inside live blocks"),
			      "%s: no violation for the pointer inside a block", c[k].mode);
		h_report_free(&rep);
		h_run_free(&r);
	}
}
END_TEST

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
START_TEST(test_signal_handler_inside_memcheck_counted)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=summary", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, so, env, h_prog("signals"));
	ck_assert_msg(r.exit_code == 0, "signals under %s: %s; stdout \"%s\"; stderr:\n%s",
		      h_allocators[_i].name, h_status(&r), r.out, r.err);
	ck_assert_msg(said(r.out, "handled=") == 7, "the handler ran %llu times, expected 7",
		      (unsigned long long)said(r.out, "handled="));
	ck_assert_msg(!strstr(r.err, "double free") && !strstr(r.err, "never saw"),
		      "under %s: a heap error the program did not make:\n%s",
		      h_allocators[_i].name, r.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "all", r.pid);
	ck_assert_msg(rec != NULL, "no record \"all\"");
	H_EXPECT_U64(rec, "allocs", said(r.out, "allocs="));
	H_EXPECT_U64(rec, "frees", said(r.out, "frees="));
	H_EXPECT_U64(rec, "reallocs", said(r.out, "reallocs="));
	H_EXPECT_U64(rec, "double_frees", 0);
	H_EXPECT_U64(rec, "invalid_frees", 0);
	H_EXPECT_U64(rec, "live_blocks", 0);
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* The issue's own case: a timer's handler allocating wherever the
 * program is, under mimalloc, which survives that bare (glibc aborts,
 * tcmalloc crashes, jemalloc may deadlock on its own lock).  Exact
 * counts; a double free only where mimalloc handed out a live block
 * twice, which the program counts itself. */
START_TEST(test_signal_timer_under_mimalloc)
{
	const char *mi;
	if (!h_allocator(H_MIMALLOC, &mi))
		return;
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, mi, env, h_prog("plain_sigtimer"), "0.5");
	ck_assert_msg(r.exit_code == 0, "plain_sigtimer: %s; stderr:\n%s", h_status(&r), r.err);
	uint64_t dups = said(r.err, "dups=");
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	H_EXPECT_U64(rec, "allocs", said(r.err, "allocs="));
	H_EXPECT_U64(rec, "invalid_frees", 0);
	H_EXPECT_U64(rec, "live_blocks", 0);
	ck_assert_msg(h_u64(rec, "double_frees") <= dups,
		      "%llu double frees, but mimalloc handed out a live block again only %llu times",
		      (unsigned long long)h_u64(rec, "double_frees"), (unsigned long long)dups);
	if (dups == 0)
		H_EXPECT_U64(rec, "frees", said(r.err, "frees="));
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

/* A report path inside a directory that does not exist. */
static const char *missing_report(void)
{
	return h_env("MEMCHECK_REPORT=%s/r.jsonl", h_tmppath("no-such-dir"));
}

START_TEST(test_report_in_missing_directory_one_line)
{
	/* plain_errors leak 3: leaks, exits 3 */
	const char *env[] = { missing_report(), NULL };
	struct h_run bare, r;
	H_RUN(&bare, 0, NULL, NULL, h_prog("plain_errors"), "leak", "3");
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak", "3");
	ck_assert_msg(r.exit_code == 3 && bare.exit_code == 3,
		      "exit status %s under memcheck (%s bare), expected exit 3 as without it",
		      h_status(&r), h_status(&bare));
	ck_assert_msg(strcmp(r.out, bare.out) == 0, "stdout changed: \"%s\" vs \"%s\"", r.out,
		      bare.out);
	ck_assert_msg(h_count_lines(r.err, "MEMCHECK_REPORT") == 1,
		      "expected one line about MEMCHECK_REPORT on stderr, got %d:\n%s",
		      h_count_lines(r.err, "MEMCHECK_REPORT"), r.err);
	ck_assert_msg(h_count_lines(r.err, "No such file or directory") == 1,
		      "the line should say why (No such file or directory):\n%s", r.err);
	h_run_free(&bare);
	h_run_free(&r);
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
	const char *env[] = { missing_report(), "MEMCHECK_TEXT=none", "MEMCHECK_SCAN=0", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("regions"), "nested");
	ck_assert_msg(r.exit_code == 0, "regions nested: %s, expected exit 0; stderr:\n%s",
		      h_status(&r), r.err);
	ck_assert_msg(h_count_lines(r.err, "MEMCHECK_REPORT") == 1,
		      "expected one line about MEMCHECK_REPORT for the process, got %d "
		      "(one per region):\n%s", h_count_lines(r.err, "MEMCHECK_REPORT"), r.err);
	h_run_free(&r);
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
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), h_env("%s=%s", var, val),
			      "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak");
	ck_assert_msg(r.exit_code == 0, "%s=%s: %s, expected exit 0", var, val, h_status(&r));
	ck_assert_msg(h_count_lines(r.err, var) == 1 && h_count_lines(r.err, "") == 1,
		      "%s=%s: expected one line on stderr, naming %s; got:\n%s", var, val,
		      var, r.err);
	char *line = line_with(r.err, var);
	for (int k = 0; k < 4 && bad_values[_i].expected[k]; k++)
		ck_assert_msg(strstr(strstr(line, var) + strlen(var), bad_values[_i].expected[k]) != NULL,
			      "%s=%s: the line should say what is expected (%s):\n%s", var, val,
			      bad_values[_i].expected[k], line);
	free(line);
	/* the defaults are in force: tracked, 16 frames, fp unwinder */
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", r.pid);
	ck_assert_msg(rec != NULL, "no \"process\" record");
	ck_assert_msg(h_nleaks(rec) == 1, "%s=%s: %zu leak records, expected 1", var, val,
		      h_nleaks(rec));
	H_EXPECT_FRAME(rec, 0, 0, "leak_here");
	H_EXPECT_FRAME(rec, 0, 1, "leak_level2");
	H_EXPECT_FRAME(rec, 0, 2, "leak_level1");
	H_EXPECT_FRAME(rec, 0, 3, "main");
	h_report_free(&rep);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("errors");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_double_free_reported_and_program_continues);
	tcase_add_test(tc, test_free_of_unknown_pointer_reported_and_passed_on);
	tcase_add_test(tc, test_realloc_of_freed_block_reported_and_fails);
	tcase_add_test(tc, test_realloc_of_unknown_pointer_reported_and_passed_on);
	tcase_add_loop_test(tc, test_free_inside_live_block_withheld, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, test_signal_handler_inside_memcheck_counted, 0, H_NALLOCATORS);
	tcase_add_test(tc, test_signal_timer_under_mimalloc);
	tcase_add_test(tc, test_report_in_missing_directory_one_line);
	tcase_add_loop_test(tc, test_bad_option_value_one_line_default_used, 0,
			    (int)(sizeof bad_values / sizeof bad_values[0]));
	suite_add_tcase(s, tc);
	TCase *bugs = tcase_create("bugs");
	tcase_set_timeout(bugs, 30);
	tcase_add_test(bugs, test_report_in_missing_directory_one_line_for_many_regions);
	suite_add_tcase(s, bugs);
	return h_run_suite(s);
}
