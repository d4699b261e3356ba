/*
 * test_regions.c - explicit regions: nesting, blocks from before a
 * region, peaks, memcheck_end() without memcheck_begin(), renaming,
 * depth, and the stack of a leak (tests/prog/regions).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct run {
	struct h_run r;
	struct h_report rep;
};

/* Run one case of tests/prog/regions, linked to memcheck, or also with
 * it preloaded (then the process region is open too). */
static const char *run_only(struct run *x, const char *kase, unsigned flags)
{
	const char *report = h_tmppath("report.jsonl");
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely lost,
	 * which is what these cases check (the programs still hold them, so
	 * the scan would call them still reachable); test_leakkinds tests the
	 * kinds. */
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=fail",
			      "MEMCHECK_SCAN=0", NULL };
	H_RUN(&x->r, flags, NULL, env, h_prog("regions"), kase);
	ck_assert_msg(x->r.exit_code == 0, "regions %s%s: %s, expected exit 0; stderr:\n%s",
		      kase, flags ? " (preloaded)" : "", h_status(&x->r), x->r.err);
	return report;
}

static void run_case(struct run *x, const char *kase, unsigned flags)
{
	H_LOAD(&x->rep, run_only(x, kase, flags));
}

static void done(struct run *x)
{
	h_report_free(&x->rep);
	h_run_free(&x->r);
}

static const struct h_json *record(struct run *x, const char *name)
{
	const struct h_json *rec = h_record(&x->rep, name, x->r.pid);
	ck_assert_msg(rec != NULL, "no record named \"%s\" from pid %d", name, (int)x->r.pid);
	return rec;
}

/* Does any frame of any leak of rec name fn? */
static bool leaks_mention(const struct h_json *rec, const char *fn)
{
	for (size_t i = 0; i < h_nleaks(rec); i++)
		for (size_t j = 0; j < h_leak_depth(rec, i); j++) {
			const char *f = h_frame_str(rec, i, j, "function");
			if (f && strcmp(f, fn) == 0)
				return true;
		}
	return false;
}

START_TEST(test_inner_leak_in_both_outer_leak_in_outer_only)
{
	struct run x;
	run_case(&x, "nested", 0);
	ck_assert_msg(x.rep.n == 2, "%zu records, expected 2 (inner, outer)", x.rep.n);
	const struct h_json *in = record(&x, "inner"), *out = record(&x, "outer");
	ck_assert_msg(in == x.rep.rec[0], "the inner region should be reported first");

	H_EXPECT_U64(in, "allocs", 2);
	H_EXPECT_U64(in, "frees", 1);
	H_EXPECT_U64(in, "live_blocks", 1);
	H_EXPECT_U64(in, "live_bytes", 200);
	H_EXPECT_COUNT(in, "definitely_lost", "blocks", 1);
	H_EXPECT_COUNT(in, "definitely_lost", "bytes", 200);
	ck_assert_msg(h_nleaks(in) == 1, "inner: %zu leak records, expected 1", h_nleaks(in));
	H_EXPECT_FRAME(in, 0, 0, "leak_inner");
	ck_assert_msg(!leaks_mention(in, "leak_outer"),
		      "inner: the outer region's leak (leak_outer) must not be listed");
	H_EXPECT_STR(in, "verdict", "fail");

	H_EXPECT_U64(out, "allocs", 3);
	H_EXPECT_U64(out, "frees", 1);
	H_EXPECT_U64(out, "bytes_allocated", 305);
	H_EXPECT_U64(out, "live_blocks", 2);
	H_EXPECT_U64(out, "live_bytes", 300);
	H_EXPECT_COUNT(out, "definitely_lost", "blocks", 2);
	H_EXPECT_COUNT(out, "definitely_lost", "bytes", 300);
	ck_assert_msg(h_nleaks(out) == 2, "outer: %zu leak records, expected 2", h_nleaks(out));
	/* largest first */
	H_EXPECT_FRAME(out, 0, 0, "leak_inner");
	ck_assert_msg(h_leak_u64(out, 0, "bytes") == 200, "outer: leaks[0].bytes = %s, expected 200",
		      h_fmt(h_leak_u64(out, 0, "bytes")));
	H_EXPECT_FRAME(out, 1, 0, "leak_outer");
	ck_assert_msg(h_leak_u64(out, 1, "bytes") == 100, "outer: leaks[1].bytes = %s, expected 100",
		      h_fmt(h_leak_u64(out, 1, "bytes")));
	done(&x);
}
END_TEST

START_TEST(test_block_from_before_region_freed_inside)
{
	struct run x;
	run_case(&x, "before", 0);
	const struct h_json *rec = record(&x, "before");
	H_EXPECT_U64(rec, "allocs", 1);
	H_EXPECT_U64(rec, "frees", 2);
	H_EXPECT_U64(rec, "bytes_allocated", 10);
	H_EXPECT_U64(rec, "bytes_freed", 1010);
	H_EXPECT_U64(rec, "live_blocks", 0);
	H_EXPECT_U64(rec, "live_bytes", 0);
	H_EXPECT_COUNT(rec, "definitely_lost", "blocks", 0);
	H_EXPECT_U64(rec, "invalid_frees", 0);
	ck_assert_msg(h_nleaks(rec) == 0, "%zu leak records, expected none", h_nleaks(rec));
	H_EXPECT_STR(rec, "verdict", "pass");
	done(&x);
}
END_TEST

START_TEST(test_peak_live_bytes_exact)
{
	/* 1 MiB, freed, then 256 KiB: the peak is 1 MiB exactly */
	struct run x;
	run_case(&x, "peak", 0);
	H_EXPECT_U64(record(&x, "peak"), "peak_live_bytes", 1 << 20);
	done(&x);
}
END_TEST

START_TEST(test_peak_of_outer_region_includes_inner_peak)
{
	/* outer holds 512 KiB while inner peaks at 1 MiB */
	struct run x;
	run_case(&x, "peak_nested", 0);
	H_EXPECT_U64(record(&x, "peak_inner"), "peak_live_bytes", 1 << 20);
	H_EXPECT_U64(record(&x, "peak_outer"), "peak_live_bytes", (1 << 20) + (512 << 10));
	done(&x);
}
END_TEST

START_TEST(test_peak_never_below_what_is_left)
{
	/* frees 10,000 older bytes, then keeps 100 */
	struct run x;
	run_case(&x, "peak_after_frees", 0);
	H_EXPECT_U64(record(&x, "peak_after_frees"), "live_bytes", 100);
	H_EXPECT_U64(record(&x, "peak_after_frees"), "peak_live_bytes", 100);
	done(&x);
}
END_TEST

START_TEST(test_end_without_begin_returns_minus_one)
{
	for (unsigned flags = 0; flags <= H_PRELOAD; flags += H_PRELOAD) {
		struct run x;
		run_case(&x, "end_without_begin", flags);
		ck_assert_msg(h_count_lines(x.r.err, "memcheck_end() without memcheck_begin()") == 3,
			      "expected 3 lines \"memcheck_end() without memcheck_begin()\" on "
			      "stderr%s, got:\n%s", flags ? " (preloaded)" : "", x.r.err);
		/* the only explicit region is reported once */
		ck_assert_msg(h_record_count(&x.rep, "once") == 1, "expected one record \"once\"");
		if (flags) /* the process region was left alone and reported */
			ck_assert_msg(h_record(&x.rep, "process", x.r.pid) != NULL,
				      "preloaded: no \"process\" record");
		done(&x);
	}
}
END_TEST

START_TEST(test_rename_innermost_region)
{
	for (unsigned flags = 0; flags <= H_PRELOAD; flags += H_PRELOAD) {
		struct run x;
		run_case(&x, "rename", flags);
		record(&x, "inner_second");
		record(&x, "second");
		ck_assert_msg(!h_record(&x.rep, "first", 0) && !h_record(&x.rep, "inner_first", 0),
			      "a region was reported under its old name");
		if (flags) /* memcheck_rename() with no region open left "process" alone */
			record(&x, "process");
		done(&x);
	}
}
END_TEST

START_TEST(test_depth_counts_explicit_regions_only)
{
	for (unsigned flags = 0; flags <= H_PRELOAD; flags += H_PRELOAD) {
		struct run x;
		run_case(&x, "depth", flags);
		done(&x);
	}
}
END_TEST

START_TEST(test_leak_stack_names_function_file_and_line)
{
	struct run x;
	run_case(&x, "stack", 0);
	int line = 0;
	ck_assert_msg(sscanf(x.r.out, "line=%d", &line) == 1, "no line=N on stdout: \"%s\"", x.r.out);
	const struct h_json *rec = record(&x, "stack");
	ck_assert_msg(h_nleaks(rec) == 1, "%zu leak records, expected 1", h_nleaks(rec));
	ck_assert_msg(h_leak_u64(rec, 0, "bytes") == 77, "leaks[0].bytes = %s, expected 77",
		      h_fmt(h_leak_u64(rec, 0, "bytes")));
	H_EXPECT_FRAME(rec, 0, 0, "leaky_function");
	const char *file = h_frame_str(rec, 0, 0, "file");
	size_t n = file ? strlen(file) : 0;
	ck_assert_msg(n >= 9 && strcmp(file + n - 9, "regions.c") == 0,
		      "leaks[0].stack[0].file = \"%s\", expected .../regions.c",
		      file ? file : "(null)");
	ck_assert_msg(h_frame_line(rec, 0, 0) == line,
		      "leaks[0].stack[0].line = %ld, expected %d (the malloc call)",
		      h_frame_line(rec, 0, 0), line);
	H_EXPECT_FRAME(rec, 0, 1, "case_stack");
	done(&x);
}
END_TEST

START_TEST(test_region_left_open_reported_at_exit)
{
	struct run x;
	run_case(&x, "unended", 0);
	const struct h_json *rec = record(&x, "unended");
	H_EXPECT_U64(rec, "allocs", 1);
	H_EXPECT_U64(rec, "frees", 1);
	H_EXPECT_STR(rec, "verdict", "fail");
	ck_assert_msg(h_violation_has(rec, "not ended"),
		      "expected a violation saying the region was not ended");
	done(&x);
}
END_TEST

START_TEST(test_status_functions)
{
	/* the program checks memcheck_live_bytes/active/allocator itself */
	for (unsigned flags = 0; flags <= H_PRELOAD; flags += H_PRELOAD) {
		struct run x;
		run_case(&x, "status", flags);
		done(&x);
	}
}
END_TEST

START_TEST(test_regions_nested_deeper_than_64)
{
	/* the 64 outermost are reported; the program's figures say the
	 * ends all answered and the depth stayed right */
	struct run x;
	run_case(&x, "deep", 0);
	ck_assert_msg(x.rep.n == 64, "%zu records, expected 64 (the outermost)", x.rep.n);
	record(&x, "deep0");
	record(&x, "deep63");
	ck_assert_msg(!h_record(&x.rep, "deep64", 0), "region deep64 should not be reported");
	ck_assert_msg(h_count_lines(x.r.err, "deeper than 64") == 1,
		      "expected one line saying regions nest deeper than 64:\n%s", x.r.err);
	done(&x);
}
END_TEST

START_TEST(test_region_name_escaped_in_json)
{
	struct run x;
	run_case(&x, "name_escapes", 0);
	ck_assert_msg(x.rep.n == 1, "%zu records, expected 1", x.rep.n);
	H_EXPECT_STR(x.rep.rec[0], "name", "q\" b\\ n\n t\t c\x01 \xc3\xa9 end");
	done(&x);
}
END_TEST

/* A region name longer than 127 bytes is cut at a UTF-8 character
 * boundary: a lone lead byte would make the record invalid JSON. */
START_TEST(test_long_utf8_region_name_cut_at_character)
{
	struct run x;
	const char *report = run_only(&x, "name_utf8_cut", 0);
	ck_assert_msg(h_report_load(report, &x.rep) == 0,
		      "a 130-byte UTF-8 region name made the report invalid: %s", x.rep.error);
	ck_assert_msg(x.rep.n == 1, "%zu records, expected 1", x.rep.n);
	const char *name = h_str(x.rep.rec[0], "name");
	ck_assert_msg(name && strncmp(name, "aaaaaaaaaa", 10) == 0 && strlen(name) <= 127,
		      "name = \"%s\", expected the first 126 or 127 bytes", name ? name : "");
	done(&x);
}
END_TEST

/* Bytes that are not UTF-8 (a Latin-1 region name, program path or
 * source path) are escaped (\u00e9 for the byte 0xe9), so the record
 * stays valid JSON. */
START_TEST(test_non_utf8_region_name_still_valid_json)
{
	struct run x;
	const char *report = run_only(&x, "name_bad_utf8", 0);
	ck_assert_msg(h_report_load(report, &x.rep) == 0,
		      "a Latin-1 region name made the report invalid: %s", x.rep.error);
	ck_assert_msg(x.rep.n == 1, "%zu records, expected 1", x.rep.n);
	const char *name = h_str(x.rep.rec[0], "name");
	ck_assert_msg(name && strncmp(name, "caf", 3) == 0, "name = \"%s\", expected caf...",
		      name ? name : "");
	done(&x);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("regions", 30);
	tcase_add_test(tc, test_inner_leak_in_both_outer_leak_in_outer_only);
	tcase_add_test(tc, test_block_from_before_region_freed_inside);
	tcase_add_test(tc, test_peak_live_bytes_exact);
	tcase_add_test(tc, test_peak_of_outer_region_includes_inner_peak);
	tcase_add_test(tc, test_peak_never_below_what_is_left);
	tcase_add_test(tc, test_end_without_begin_returns_minus_one);
	tcase_add_test(tc, test_rename_innermost_region);
	tcase_add_test(tc, test_depth_counts_explicit_regions_only);
	tcase_add_test(tc, test_leak_stack_names_function_file_and_line);
	tcase_add_test(tc, test_region_left_open_reported_at_exit);
	tcase_add_test(tc, test_status_functions);
	tcase_add_test(tc, test_regions_nested_deeper_than_64);
	tcase_add_test(tc, test_region_name_escaped_in_json);
	TCase *bugs = h_tcase("bugs", 30);
	tcase_add_test(bugs, test_long_utf8_region_name_cut_at_character);
	tcase_add_test(bugs, test_non_utf8_region_name_still_valid_json);
	return h_run_suite(NULL);
}
