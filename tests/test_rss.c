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

static const struct {
	const char *so;         /* NULL: glibc, nothing extra preloaded */
	const char *name;
	/* Gives a freed 100 MiB block back to the system at once: glibc
	 * (mmapped chunk), mimalloc (its own segment), jemalloc (huge
	 * arena, decay 0).  tcmalloc keeps it in its page heap. */
	bool returns_big;
} allocs[] = {
	{ NULL, "glibc", true },
	{ "libmimalloc.so.2", "mimalloc", true },
	{ "libjemalloc.so.2", "jemalloc", true },
	{ "libtcmalloc_minimal.so.4", "tcmalloc", false },
	{ "libtcmalloc.so.4", "tcmalloc", false },
};
#define NALLOCS (int)(sizeof allocs / sizeof allocs[0])

struct rss {
	uint64_t begin, end, peak;
};

struct run {
	struct h_run r;
	struct h_report rep;
	char label[128];        /* "rss_touch CASE under ALLOCATOR" */
};

/* Run rss_touch CASE under allocator i; false (with a note) when that
 * allocator is not installed. */
static bool run_case(struct run *x, int i, const char *kase)
{
	const char *so = NULL;
	if (allocs[i].so && !(so = h_allocator_so(allocs[i].so))) {
		printf("note: %s not installed; skipping it\n", allocs[i].so);
		return false;
	}
	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=fail", NULL };
	H_RUN(&x->r, H_PRELOAD, so, env, h_prog("rss_touch"), kase);
	snprintf(x->label, sizeof x->label, "rss_touch %s under %s", kase,
		 allocs[i].so ? allocs[i].so : "glibc");
	ck_assert_msg(x->r.exit_code == 0, "%s: %s, expected exit 0; stderr:\n%s", x->label,
		      h_status(&x->r), x->r.err);
	H_LOAD(&x->rep, report);
	return true;
}

static void done(struct run *x)
{
	h_report_free(&x->rep);
	h_run_free(&x->r);
}

/* The figures of region name: from the program's line "NAME rss_begin=N
 * rss_end=N peak_rss=N", checked against its JSON record. */
static struct rss figures(struct run *x, const char *name)
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

	const struct h_json *rec = h_record(&x->rep, name, x->r.pid);
	ck_assert_msg(rec != NULL, "%s: no record \"%s\" in the report", x->label, name);
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
static void expect_touched(struct run *x, const char *name, struct rss f)
{
	double d = (double)f.peak - (double)f.begin;
	ck_assert_msg(d >= TOUCHED * 0.95 && d <= TOUCHED * 1.05,
		      "%s: region \"%s\": peak_rss - rss_begin = %.2f MiB, expected 100 MiB "
		      "+-5%% (rss_begin %.1f, peak_rss %.1f MiB)", x->label, name, rise(f),
		      f.begin / MiB, f.peak / MiB);
}

START_TEST(test_peak_rises_by_what_was_touched)
{
	struct run x;
	if (!run_case(&x, _i, "big"))
		return;
	expect_touched(&x, "big", figures(&x, "big"));
	done(&x);
}
END_TEST

START_TEST(test_peak_rises_by_small_blocks_touched)
{
	/* 25,600 blocks of 4 KiB: the allocator's headers and memcheck's
	 * own block table are resident too (measured: glibc and mimalloc
	 * +3.5 MiB, of which memcheck's table about 3; jemalloc +6.7), so
	 * only the 100 MiB is a floor here. */
	struct run x;
	if (!run_case(&x, _i, "small"))
		return;
	struct rss f = figures(&x, "small");
	double d = (double)f.peak - (double)f.begin;
	ck_assert_msg(d >= TOUCHED * 0.99 && d <= TOUCHED * 1.10,
		      "%s: peak_rss - rss_begin = %.2f MiB, expected 100 MiB, at most 10%% more",
		      x.label, rise(f));
	done(&x);
}
END_TEST

START_TEST(test_outer_peak_includes_inner_peak)
{
	struct run x;
	if (!run_case(&x, _i, "nested"))
		return;
	struct rss in = figures(&x, "inner"), out = figures(&x, "outer");
	expect_touched(&x, "inner", in);
	ck_assert_msg(out.peak >= in.peak,
		      "%s: outer peak_rss %.1f MiB below the inner region's %.1f MiB", x.label,
		      out.peak / MiB, in.peak / MiB);
	expect_touched(&x, "outer", out);
	done(&x);
}
END_TEST

START_TEST(test_inner_peak_excludes_what_ran_before)
{
	/* The outer region wrote 100 MiB before the inner region began:
	 * the outer one keeps that peak, the inner one starts afresh. */
	struct run x;
	if (!run_case(&x, _i, "nested_before"))
		return;
	struct rss in = figures(&x, "inner"), out = figures(&x, "outer");
	expect_touched(&x, "outer", out);
	ck_assert_msg(rise(in) < 5,
		      "%s: inner peak_rss - rss_begin = %.2f MiB: it inherited the outer region's "
		      "earlier peak (expected under 5 MiB)", x.label, rise(in));
	done(&x);
}
END_TEST

START_TEST(test_rss_end_below_peak_after_big_free)
{
	struct run x;
	if (!run_case(&x, _i, "big"))
		return;
	struct rss f = figures(&x, "big");
	ck_assert_msg(f.end <= f.peak, "%s: rss_end %.1f MiB above peak_rss %.1f MiB", x.label,
		      f.end / MiB, f.peak / MiB);
	if (allocs[_i].returns_big)
		ck_assert_msg(f.end + 90 * MiB < f.peak,
			      "%s: rss_end %.1f MiB, peak_rss %.1f MiB: the freed 100 MiB block "
			      "should be off the resident set at the region's end", x.label,
			      f.end / MiB, f.peak / MiB);
	done(&x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rss");
	TCase *tc = tcase_create("rss");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_peak_rises_by_what_was_touched, 0, NALLOCS);
	tcase_add_loop_test(tc, test_peak_rises_by_small_blocks_touched, 0, NALLOCS);
	tcase_add_loop_test(tc, test_outer_peak_includes_inner_peak, 0, NALLOCS);
	tcase_add_loop_test(tc, test_inner_peak_excludes_what_ran_before, 0, NALLOCS);
	tcase_add_loop_test(tc, test_rss_end_below_peak_after_big_free, 0, NALLOCS);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
