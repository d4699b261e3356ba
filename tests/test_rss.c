/*
 * test_rss.c - per-region resident set size (tests/prog/rss_touch,
 * linked to memcheck) under glibc and each other allocator preloaded
 * after libmemcheck.so: a region that writes 100 MiB sees its peak rise
 * by 100 MiB, an enclosing region keeps the peak of the regions inside
 * it and of its own work before them, an inner region does not inherit
 * the peak of what ran before it, and a big block given back shows in
 * rss_end.  The figures memcheck_end() returned (the program prints them)
 * must be the ones in the JSON report.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MiB (1024.0 * 1024.0)
#define TOUCHED (100 * MiB)

/* Gives a freed 100 MiB block back to the system at once: glibc
 * (mmapped chunk), mimalloc (its own segment), jemalloc (huge arena,
 * decay 0).  tcmalloc keeps it in its page heap. */
static bool returns_big(int a)
{
	return a != H_TCMALLOC && a != H_TCMALLOC_FULL;
}

struct rss {
	uint64_t begin, end, peak;
};

/* The figures of region name: from the program's line "NAME rss_begin=N
 * rss_end=N peak_rss=N", checked against its JSON record. */
static struct rss figures(struct h_res *x, const char *name)
{
	struct rss f;
	char prefix[160];
	snprintf(prefix, sizeof prefix, "%s rss_begin=", name);
	const char *line = strstr(x->r.out, prefix);
	ck_assert_msg(line && (line == x->r.out || line[-1] == '\n'),
		      "%s: no line for region \"%s\" in its output:\n%s", x->label, name, x->r.out);
	unsigned long long b, e, p;
	ck_assert_msg(sscanf(line + strlen(name), " rss_begin=%llu rss_end=%llu peak_rss=%llu",
			     &b, &e, &p) == 3,
		      "%s: region \"%s\": a figure is unknown or malformed: %.120s", x->label,
		      name, line);
	f.begin = b;
	f.end = e;
	f.peak = p;

	const struct h_json *rec = h_rec(x, name);
	H_EXPECT_U64(rec, "rss_begin", f.begin);
	H_EXPECT_U64(rec, "rss_end", f.end);
	H_EXPECT_U64(rec, "peak_rss", f.peak);
	return f;
}

/* peak - begin, in MiB, for messages */
static double rise(struct rss f)
{
	return ((double)f.peak - (double)f.begin) / MiB;
}

/* peak_rss - rss_begin within 5% of the 100 MiB written */
static void expect_touched(struct h_res *x, const char *name, struct rss f)
{
	double d = (double)f.peak - (double)f.begin;
	ck_assert_msg(d >= TOUCHED * 0.95 && d <= TOUCHED * 1.05,
		      "%s: region \"%s\": peak_rss - rss_begin = %.2f MiB, expected 100 MiB "
		      "+-5%% (rss_begin %.1f, peak_rss %.1f MiB)", x->label, name, rise(f),
		      f.begin / MiB, f.peak / MiB);
}

H_CHECK(peak_rises_by_what_was_touched)
{
	expect_touched(x, "big", figures(x, "big"));
}

H_CHECK(peak_rises_by_small_blocks_touched)
{
	/* 25,600 blocks of 4 KiB: the allocator's headers and memcheck's
	 * own block table are resident too (measured: glibc and mimalloc
	 * +3.5 MiB, of which memcheck's table about 3; jemalloc +6.7), so
	 * only the 100 MiB is a floor here. */
	struct rss f = figures(x, "small");
	double d = (double)f.peak - (double)f.begin;
	ck_assert_msg(d >= TOUCHED * 0.99 && d <= TOUCHED * 1.10,
		      "%s: peak_rss - rss_begin = %.2f MiB, expected 100 MiB, at most 10%% more",
		      x->label, rise(f));
}

H_CHECK(outer_peak_includes_inner_peak)
{
	struct rss in = figures(x, "inner"), out = figures(x, "outer");
	expect_touched(x, "inner", in);
	ck_assert_msg(out.peak >= in.peak,
		      "%s: outer peak_rss %.1f MiB below the inner region's %.1f MiB", x->label,
		      out.peak / MiB, in.peak / MiB);
	expect_touched(x, "outer", out);
}

H_CHECK(inner_peak_excludes_what_ran_before)
{
	/* The outer region wrote 100 MiB before the inner region began:
	 * the outer one keeps that peak, the inner one starts afresh. */
	struct rss in = figures(x, "inner"), out = figures(x, "outer");
	expect_touched(x, "outer", out);
	ck_assert_msg(rise(in) < 5,
		      "%s: inner peak_rss - rss_begin = %.2f MiB: it inherited the outer region's "
		      "earlier peak (expected under 5 MiB)", x->label, rise(in));
}

H_CHECK(rss_end_below_peak_after_big_free)
{
	struct rss f = figures(x, "big");
	ck_assert_msg(f.end <= f.peak, "%s: rss_end %.1f MiB above peak_rss %.1f MiB", x->label,
		      f.end / MiB, f.peak / MiB);
	if (returns_big(x->alloc))
		ck_assert_msg(f.end + 90 * MiB < f.peak,
			      "%s: rss_end %.1f MiB, peak_rss %.1f MiB: the freed 100 MiB block "
			      "should be off the resident set at the region's end", x->label,
			      f.end / MiB, f.peak / MiB);
}

/* rss_touch CASE under each allocator, preloaded after libmemcheck.so */
#define RSS_TOUCH(kase)                                                        \
	.allocators = H_EVERY_ONE,                                              \
	.run = { .prog = "rss_touch", .args = H_LIST(kase), .flags = H_PRELOAD, .text = "fail" }

static const struct h_case cases[] = {
	{ "the peak rises by what was touched", RSS_TOUCH("big"),
	  .check = peak_rises_by_what_was_touched },
	{ "the peak rises by small blocks touched", RSS_TOUCH("small"),
	  .check = peak_rises_by_small_blocks_touched },
	{ "the outer peak includes the inner peak", RSS_TOUCH("nested"),
	  .check = outer_peak_includes_inner_peak },
	{ "the inner peak excludes what ran before", RSS_TOUCH("nested_before"),
	  .check = inner_peak_excludes_what_ran_before },
	{ "rss_end below the peak after a big free", RSS_TOUCH("big"),
	  .check = rss_end_below_peak_after_big_free },
};

int main(void)
{
	TCase *tc = h_tcase("rss", 60);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
