/*
 * test_regions.c - explicit regions: nesting, blocks from before a
 * region, peaks, memcheck_end() without memcheck_begin(), renaming,
 * depth, and the stack of a leak (tests/prog/regions); the program's
 * pending dlerror() message across a region's end that loads libdw to
 * name its leak (tests/prog/dlerror_region: NULL on main); a lost
 * block's copies in the dead frames below memcheck_end's caller
 * (tests/prog/stale_end); memcheck's own memory over 2,000 regions
 * (tests/prog/regions_many: a page a region's end before session 44);
 * an outer region's snapshot outgrowing its slot's array, then the
 * slot's next region (tests/prog/regions_nested_sites: SIGSEGV before).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Leak i of rec is n bytes. */
static void expect_leak_bytes(const struct h_res *x, const struct h_json *rec, size_t i,
			      uint64_t n)
{
	ck_assert_msg(h_leak_u64(rec, i, "bytes") == n, "%s: %s: leaks[%zu].bytes = %s, "
		      "expected %llu", x->label, h_str(rec, "name"), i,
		      h_fmt(h_leak_u64(rec, i, "bytes")), (unsigned long long)n);
}

/* Each region's own leaks, the largest first. */
H_CHECK(nested_leaks)
{
	const struct h_json *in = h_rec(x, "inner"), *out = h_rec(x, "outer");
	ck_assert_msg(in == x->rep.rec[0], "%s: the inner region should be reported first",
		      x->label);
	ck_assert_msg(h_nleaks(in) == 1, "inner: %zu leak records, expected 1", h_nleaks(in));
	H_EXPECT_FRAME(in, 0, 0, "leak_inner");
	ck_assert_msg(!h_leaks_mention(in, "leak_outer"),
		      "inner: the outer region's leak (leak_outer) must not be listed");
	ck_assert_msg(h_nleaks(out) == 2, "outer: %zu leak records, expected 2", h_nleaks(out));
	H_EXPECT_FRAME(out, 0, 0, "leak_inner");
	expect_leak_bytes(x, out, 0, 200);
	H_EXPECT_FRAME(out, 1, 0, "leak_outer");
	expect_leak_bytes(x, out, 1, 100);
}

H_CHECK(no_leaks)
{
	ck_assert_msg(h_nleaks(rec) == 0, "%s: %zu leak records, expected none", x->label,
		      h_nleaks(rec));
}

/* the only explicit region is reported once */
H_CHECK(once)
{
	ck_assert_msg(h_record_count(&x->rep, "once") == 1, "%s: expected one record \"once\"",
		      x->label);
}

/* reported under the new names only */
H_CHECK(renamed)
{
	h_rec(x, "inner_second");
	h_rec(x, "second");
	ck_assert_msg(!h_record(&x->rep, "first", 0) && !h_record(&x->rep, "inner_first", 0),
		      "%s: a region was reported under its old name", x->label);
}

/* the leak's stack: the function, file and line of the malloc call
 * (the program prints the line), then its caller */
H_CHECK(stack_named)
{
	int line = 0;
	ck_assert_msg(sscanf(x->r.out, "line=%d", &line) == 1, "no line=N on stdout: \"%s\"",
		      x->r.out);
	ck_assert_msg(h_nleaks(rec) == 1, "%zu leak records, expected 1", h_nleaks(rec));
	expect_leak_bytes(x, rec, 0, 77);
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
}

H_CHECK(not_ended)
{
	ck_assert_msg(h_violation_has(rec, "not ended"),
		      "%s: expected a violation saying the region was not ended", x->label);
}

/* the 64 outermost are reported; the program's figures say the ends
 * all answered and the depth stayed right */
H_CHECK(outermost_64)
{
	h_rec(x, "deep0");
	h_rec(x, "deep63");
	ck_assert_msg(!h_record(&x->rep, "deep64", 0), "region deep64 should not be reported");
}

H_CHECK(escaped)
{
	H_EXPECT_STR(x->rep.rec[0], "name", "q\" b\\ n\n t\t c\x01 \xc3\xa9 end");
}

/* A region name longer than 127 bytes is cut at a UTF-8 character
 * boundary: a lone lead byte would make the record invalid JSON (the
 * report loads). */
H_CHECK(cut_at_character)
{
	const char *name = h_str(x->rep.rec[0], "name");
	ck_assert_msg(name && strncmp(name, "aaaaaaaaaa", 10) == 0 && strlen(name) <= 127,
		      "name = \"%s\", expected the first 126 or 127 bytes", name ? name : "");
}

/* Bytes that are not UTF-8 (a Latin-1 region name, program path or
 * source path) are escaped (\u00e9 for the byte 0xe9), so the record
 * stays valid JSON (the report loads). */
H_CHECK(latin1_escaped)
{
	const char *name = h_str(x->rep.rec[0], "name");
	ck_assert_msg(name && strncmp(name, "caf", 3) == 0, "name = \"%s\", expected caf...",
		      name ? name : "");
}

/* One case of tests/prog/regions, linked to memcheck, or also with it
 * preloaded (PRELOADED: then the process region is open too).
 * MEMCHECK_SCAN=0: every block left behind counts as definitely lost,
 * which is what these cases check (the programs still hold them, so the
 * scan would call them still reachable); test_leakkinds tests the kinds. */
#define REGIONS(kase, ...)                                                     \
	.name = kase, .allocators = H_ONLY(H_GLIBC),                            \
	.run = { .prog = "regions", .args = H_LIST(kase), .text = "fail",       \
		 .env = H_LIST("MEMCHECK_SCAN=0"), __VA_ARGS__ }
#define PRELOADED .flags = H_PRELOAD

static const struct h_case cases[] = {
	/* the inner region's leak in both, the outer's in the outer only */
	{ REGIONS("nested"), .records = 2, .check = nested_leaks,
	  .want = {
#define IN(...) { __VA_ARGS__, .rec = "inner" }
#define OUT(...) { __VA_ARGS__, .rec = "outer" }
		  IN("allocs", 2), IN("frees", 1), IN("live_blocks", 1), IN("live_bytes", 200),
		  IN("definitely_lost.blocks", 1), IN("definitely_lost.bytes", 200),
		  IN("verdict", .str = "fail"),
		  OUT("allocs", 3), OUT("frees", 1), OUT("bytes_allocated", 305),
		  OUT("live_blocks", 2), OUT("live_bytes", 300),
		  OUT("definitely_lost.blocks", 2), OUT("definitely_lost.bytes", 300) } },
#undef IN
#undef OUT
	/* a block from before the region, freed inside it */
	{ REGIONS("before"), .record = "before", .check = no_leaks,
	  .want = { { "allocs", 1 }, { "frees", 2 }, { "bytes_allocated", 10 },
		    { "bytes_freed", 1010 }, { "live_blocks", 0 }, { "live_bytes", 0 },
		    { "definitely_lost.blocks", 0 }, { "invalid_frees", 0 },
		    { "verdict", .str = "pass" } } },
	/* 1 MiB, freed, then 256 KiB: the peak is 1 MiB exactly */
	{ REGIONS("peak"), .record = "peak", .want = { { "peak_live_bytes", 1 << 20 } } },
	/* outer holds 512 KiB while inner peaks at 1 MiB */
	{ REGIONS("peak_nested"),
	  .want = { { "peak_live_bytes", 1 << 20, .rec = "peak_inner" },
		    { "peak_live_bytes", (1 << 20) + (512 << 10), .rec = "peak_outer" } } },
	/* frees 10,000 older bytes, then keeps 100: the peak never below */
	{ REGIONS("peak_after_frees"), .record = "peak_after_frees",
	  .want = { { "live_bytes", 100 }, { "peak_live_bytes", 100 } } },
	/* memcheck_end() without memcheck_begin() returns -1 */
	{ REGIONS("end_without_begin"), .check = once,
	  .err_lines = { { "memcheck_end() without memcheck_begin()", 3 } } },
	/* preloaded: the process region was left alone and reported */
	{ REGIONS("end_without_begin", PRELOADED), .check = once, .record = "process",
	  .err_lines = { { "memcheck_end() without memcheck_begin()", 3 } } },
	/* memcheck_rename() names the innermost region */
	{ REGIONS("rename"), .check = renamed },
	/* with no region open it left "process" alone */
	{ REGIONS("rename", PRELOADED), .check = renamed, .record = "process" },
	/* the depth counts explicit regions only (the program checks it) */
	{ REGIONS("depth") },
	{ REGIONS("depth", PRELOADED) },
	{ REGIONS("stack"), .record = "stack", .check = stack_named },
	/* a region left open is reported at exit */
	{ REGIONS("unended"), .record = "unended", .check = not_ended,
	  .want = { { "allocs", 1 }, { "frees", 1 }, { "verdict", .str = "fail" } } },
	/* the program checks memcheck_live_bytes/active/allocator itself */
	{ REGIONS("status") },
	{ REGIONS("status", PRELOADED) },
	{ REGIONS("deep"), .records = 64, .check = outermost_64,
	  .err_lines = { { "deeper than 64", 1 } } },
	{ REGIONS("name_escapes"), .records = 1, .check = escaped },
	{ REGIONS("name_utf8_cut"), .records = 1, .check = cut_at_character },
	{ REGIONS("name_bad_utf8"), .records = 1, .check = latin1_escaped },
	/* no cache: the names come from libdw, which the region's end loads */
	{ .name = "a pending dlerror() kept across memcheck_end", .record = "dlerror",
	  .run = { .prog = "dlerror_region", .flags = H_LINKED, .text = "summary",
		   .env = H_LIST("MEMCHECK_CACHE=off") },
	  .stdout_is = "kept\n", .want = { { "definitely_lost.blocks", 1 } } },
	/* a lost block's copies only in dead frames below memcheck_end's
	 * caller, where memcheck_end's own frame lies: not roots (still
	 * reachable in about half the runs before session 43) */
	/* 2,000 regions: memcheck's own memory does not grow with them (each
	 * region's end left a page of its peak snapshot behind before session
	 * 44: +6 MiB here; mimalloc's, jemalloc's and tcmalloc's statistics
	 * walked the mappings at each end, cli_prog iter 4000 15-25 s) */
	{ .name = "memcheck's own memory flat over 2,000 regions",
	  .run = { .prog = "regions_many", .args = H_LIST("2000"), .flags = H_LINKED, .text = "none" },
	  .stdout_is = "flat\n" },
	/* an outer region's peak snapshot outgrowing its slot's array, then
	 * another region at its depth with an inner one: SIGSEGV inside
	 * memcheck under every allocator before session 44 (the slot held
	 * the array the copy's growth unmapped) */
	{ .name = "a peak snapshot outgrowing its slot, then the slot's next region",
	  .run = { .prog = "regions_nested_sites", .flags = H_LINKED, .text = "none" },
	  .stdout_is = "ok\n" },
	{ .name = "copies below memcheck_end's caller are no roots", .record = "stale",
	  .run = { .prog = "stale_end", .flags = H_LINKED, .text = "none" },
	  .stdout_is = "1\n", .want = { { "definitely_lost.blocks", 1 } } },
};

int main(void)
{
	TCase *tc = h_tcase("regions", 30);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
