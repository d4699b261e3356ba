/*
 * test_runs.c - `memcheck run` with several runs (tools/run.c,
 * records.c, views.c): the spread of each figure between runs in the
 * table and in the report, gates on the median of measured figures and
 * on every run for counted ones, `memcheck gate` judging a stored report
 * of several runs as `run` did, -n auto running an allocator that gives
 * memory back on a timer three times and a deterministic one once (and
 * the timed_purge_ms key that decides it), and the table's lost column.
 * The noisy program is tests/prog/plain_noisy: its n-th run allocates n
 * times 8 MiB, so runs 1-3 differ by design.
 *
 * A command run once is a row (run.cli); gating on the median needs the
 * figures of a first run to set the limits of the next: a test.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ull * 1024)

/* memcheck ARGS..., the words as given (MEMCHECK_TEXT=none). */
#define MC(x, ...) H_EXEC((x), .cli = H_LIST(__VA_ARGS__))

#define EXPECT_HAS(text, needle, what)                                         \
	ck_assert_msg(strstr((text), (needle)) != NULL, "%s: \"%s\" not in:\n%s", (what), \
		      (needle), (text))

static const char *write_tmp(const char *tag, const char *text)
{
	const char *p = h_tmppath(tag);
	FILE *f = fopen(p, "w");
	ck_assert_msg(f != NULL, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
	return p;
}

/* plain_noisy's counter, new for each use: runs 1-3 then give 8, 16 and
 * 24 MiB. */
static const char *counter(void)
{
	const char *p = h_tmppath("noisy.count");
	unlink(p);
	return p;
}

/* memcheck run -n 3 -a glibc [--budget budget] on plain_noisy, with a
 * new counter: runs of 8, 16 and 24 MiB; its records in x->rep. */
static void noisy(struct h_res *x, const char *budget)
{
	H_EXEC(x, .cli = budget ? H_LIST("run", "-n", "3", "-a", "glibc", "--budget", budget)
				: H_LIST("run", "-n", "3", "-a", "glibc"),
	       .prog = "plain_noisy", .args = H_LIST(counter()));
}

/* spread.KEY.SUB of a record, or H_MISSING. */
static uint64_t spread(const struct h_json *rec, const char *key, const char *sub)
{
	const struct h_json *s = h_json_get(rec, "spread");
	return s ? h_count(s, key, sub) : H_MISSING;
}

/* the report: each record says which run it is of how many, and the
 * spread of each figure that differs between them */
H_CHECK(spread_in_the_report)
{
	const struct h_report *hr = &x->rep;
	ck_assert_uint_eq(hr->n, 3);
	uint64_t peaks[3];
	for (size_t i = 0; i < 3; i++) {
		const struct h_json *r = hr->rec[i];
		H_EXPECT_U64(r, "run", i + 1);
		H_EXPECT_U64(r, "runs", 3);
		ck_assert_uint_eq(spread(r, "allocs", "min"), 2052);
		ck_assert_uint_eq(spread(r, "allocs", "median"), 4101);
		ck_assert_uint_eq(spread(r, "allocs", "max"), 6149);
		peaks[i] = h_u64(r, "peak_rss");
		/* a figure every run agrees on is not listed */
		ck_assert_uint_eq(spread(r, "double_frees", "min"), H_MISSING);
	}
	ck_assert_msg(peaks[0] < peaks[1] && peaks[1] < peaks[2],
		      "peak_rss %s, %s, %s: expected growing with the run", h_fmt(peaks[0]),
		      h_fmt(peaks[1]), h_fmt(peaks[2]));
	ck_assert_uint_eq(spread(hr->rec[0], "peak_rss", "median"), peaks[1]);
	ck_assert_uint_eq(spread(hr->rec[2], "peak_rss", "max"), peaks[2]);
}

/* peak_rss is judged on its median (the second run's, about 16 MiB more
 * than the program's base), allocs in every run: a limit between the
 * median and the largest run passes for the first and fails for the
 * second.  `memcheck gate` on the stored report says the same. */
START_TEST(gate_on_the_median)
{
	/* The three runs' peaks, measured first: the limits sit between. */
	struct h_res r;
	noisy(&r, NULL);
	h_expect_exit(&r, 0);
	ck_assert_uint_ge(r.rep.n, 1);
	uint64_t median = spread(r.rep.rec[0], "peak_rss", "median");
	uint64_t max = spread(r.rep.rec[0], "peak_rss", "max");
	h_res_free(&r);
	ck_assert_msg(median != H_MISSING && max > median + 4 * MiB,
		      "peak_rss median %s, max %s: expected runs 8 MiB apart", h_fmt(median),
		      h_fmt(max));

	/* Between the median and the largest run, with room for the
	 * machine's own noise either side: 8 MiB apart by design. */
	char text[256];
	snprintf(text, sizeof text, "peak_rss <= %llu\n",
		 (unsigned long long)(median + 4 * MiB));
	const char *loose = write_tmp("loose.budget", text);
	noisy(&r, loose);
	/* peak_rss limit above the median, below the largest run */
	h_expect_exit(&r, 0);
	/* the library failed the third run's record on its own reading;
	 * gate, like run, judges the median */
	ck_assert_uint_eq(r.rep.n, 3);
	ck_assert_str_eq(h_str(r.rep.rec[2], "verdict"), "fail");
	struct h_res g;
	MC(&g, "gate", "--budget", loose, r.report);
	h_expect_exit(&g, 0);
	h_res_free(&g);
	h_res_free(&r);

	snprintf(text, sizeof text, "peak_rss <= %llu\n",
		 (unsigned long long)(median - 4 * MiB));
	const char *tight = write_tmp("tight.budget", text);
	noisy(&r, tight);
	h_expect_exit(&r, 1);   /* peak_rss limit below the median */
	EXPECT_HAS(r.r.err, "FAIL 3/3", "verdict: every record of the region judged on the median");
	h_res_free(&r);

	/* counted: one run over the limit fails the region */
	const char *counted = write_tmp("counted.budget", "allocs <= 5000\n");
	noisy(&r, counted);
	h_expect_exit(&r, 1);   /* allocs over the limit in the third run */
	EXPECT_HAS(r.r.err, "FAIL 1/3", "verdict");
	MC(&g, "gate", "--budget", counted, r.report);
	h_expect_exit(&g, 1);
	EXPECT_HAS(g.r.out, "3 records, 1 failed", "gate on the stored runs");
	h_res_free(&g);
	h_res_free(&r);
}
END_TEST

/* -n auto (the default): an allocator whose records say it gives memory
 * back on a timer runs three times, one that does not, once; jemalloc's
 * decay turned off makes it one of those. */
H_CHECK(glibc_once_jemalloc_thrice)
{
	const struct h_report *hr = &x->rep;
	ck_assert_uint_eq(hr->n, 4);
	H_EXPECT_U64(hr->rec[0], "timed_purge_ms", 0);       /* glibc */
	H_EXPECT_U64(hr->rec[0], "runs", 1);
	for (size_t i = 1; i < 4; i++) {
		H_EXPECT_U64(hr->rec[i], "timed_purge_ms", 10000);
		H_EXPECT_U64(hr->rec[i], "runs", 3);
	}
}

H_CHECK(none_timed)
{
	for (size_t i = 0; i < x->rep.n; i++)
		H_EXPECT_U64(x->rep.rec[i], "timed_purge_ms", 0);
}

/* The table's lost column: definitely and indirectly lost together,
 * which is the same however the scan splits a cycle. */
H_CHECK(lost_is_definitely_and_indirectly)
{
	const struct h_json *r = h_record(&x->rep, "process", -1);
	ck_assert_ptr_nonnull(r);
	uint64_t d = h_count(r, "definitely_lost", "bytes"), i = h_count(r, "indirectly_lost", "bytes");
	ck_assert_msg(d > 0 && i > 0, "definitely %s, indirectly %s", h_fmt(d), h_fmt(i));
	char want[64];
	snprintf(want, sizeof want, " %llu B ", (unsigned long long)(d + i));
	if (d + i >= 1024)
		snprintf(want, sizeof want, " %.1f KiB ", (double)(d + i) / 1024);
	EXPECT_HAS(x->r.err, want, "lost column = definitely + indirectly");
}

/* plain_noisy's counter, a new path each row (not a file yet: the first
 * run's figures are those of a program that finds none): runs 1-3 give
 * 8, 16 and 24 MiB. */
H_SETUP(new_counter)
{
	static const char *args[2];
	args[0] = counter();
	run->args = args;
	return true;
}
#define NOISY(...) .setup = new_counter, .run = { .cli = H_LIST("run", __VA_ARGS__), .prog = "plain_noisy"
/* Each allocator says whether it gives memory back on a timer, by its
 * own configuration: plain_clean's one record. */
#define TIMED(alloc, ms, ...) \
	{ "timed_purge_ms", .allocators = H_ONLY(alloc), .records = 1, \
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, __VA_ARGS__ }, \
	  .want = { { "timed_purge_ms", ms } } }

static const struct h_case cases[] = {
	/* the table: medians, each followed by how far the farthest run is */
	{ "spread in table and report", .allocators = H_ONCE, NOISY("-n", "3", "-a", "glibc") },
	  .check = spread_in_the_report,
	  .err = H_LIST("each figure is the median of an allocator's runs",
			"4,101 ±50%",     /* allocs: 2,052, 4,101 and 6,149 */
			"16.0 MiB ±50%",  /* peak live: 8, 16 and 24 MiB */
			"3 runs, wall ", "varied between runs by up to: peak RSS ±",
			"gated on the medians") },
	/* -n auto: rows once, if jemalloc is installed */
	{ "auto", .allocators = H_ONLY(H_JEMALLOC),
	  NOISY("-a", "glibc,jemalloc"), .env = H_LIST("MALLOC_CONF=") },
	  .err = H_LIST("jemalloc gives freed memory back on a timer (after up to 10000 ms)",
			"  glibc          1 run,", "  jemalloc       3 runs"),
	  .check = glibc_once_jemalloc_thrice },
	{ "auto, jemalloc without decay", .allocators = H_ONLY(H_JEMALLOC),
	  NOISY("-a", "jemalloc"), .env = H_LIST("MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1") },
	  .err = H_LIST("  jemalloc       1 run,"), .no_err = H_LIST("on a timer"),
	  .check = none_timed },
	/* -n overrides: once is once */
	{ "-n 1", .allocators = H_ONLY(H_JEMALLOC),
	  NOISY("-n", "1", "-a", "jemalloc"), .env = H_LIST("MALLOC_CONF=") },
	  .err = H_LIST("  jemalloc       1 run,") },
	TIMED(H_GLIBC, 0),
	TIMED(H_TCMALLOC, 0),
	TIMED(H_JEMALLOC, 10000, .env = H_LIST("MALLOC_CONF=")),
	TIMED(H_JEMALLOC, 3000, .env = H_LIST("MALLOC_CONF=dirty_decay_ms:2000,muzzy_decay_ms:3000")),
	TIMED(H_JEMALLOC, 0, .env = H_LIST("MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0")),
	TIMED(H_MIMALLOC, 500),     /* its segment cache's delay */
	TIMED(H_MIMALLOC, 25, .env = H_LIST("MIMALLOC_SEGMENT_DECOMMIT_DELAY=0")),
	TIMED(H_MIMALLOC, 0, .env = H_LIST("MIMALLOC_ALLOW_DECOMMIT=0")),
	{ "a leaked cycle", .allocators = H_ONCE, .exit = 1,
	  .run = { .cli = H_LIST("run", "-a", "glibc"), .prog = "plain_leak_cycle" },
	  .err = H_LIST("lost (d+i)"), .check = lost_is_definitely_and_indirectly },
};

int main(void)
{
	TCase *tc = h_tcase("runs", 120);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, gate_on_the_median);
	return h_run_suite(NULL);
}
