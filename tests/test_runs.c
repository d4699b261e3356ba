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
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ull * 1024)

static const char *cli(void)
{
	static char path[4096];
	if (!path[0])
		snprintf(path, sizeof path, "%s/memcheck", h_build());
	return path;
}

/* memcheck ARGS... with env (NULL: MEMCHECK_TEXT=none). */
#define MC(r, env, ...)                                                        \
	do {                                                                   \
		static const char *const quiet_[] = { "MEMCHECK_TEXT=none", NULL }; \
		const char *argv_[] = { cli(), __VA_ARGS__, NULL };            \
		const char *const *env_ = (env);                               \
		ck_assert(h_run((r), argv_, env_ ? env_ : quiet_, 0, NULL) == 0); \
	} while (0)

#define EXPECT_EXIT(r, code, what)                                             \
	ck_assert_msg((r)->exit_code == (code), "%s: %s, expected exit %d\nstderr:\n%s", \
		      (what), h_status(r), (code), (r)->err)

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

/* memcheck run -n 3 -a glibc [--budget budget] --report report on
 * plain_noisy, with a new counter: runs of 8, 16 and 24 MiB. */
static void noisy(struct h_run *r, const char *budget, const char *report)
{
	static const char *const env[] = { "MEMCHECK_TEXT=none", NULL };
	const char *argv[16] = { cli(), "run", "-n", "3", "-a", "glibc", "--report", report };
	int n = 8;
	if (budget) {
		argv[n++] = "--budget";
		argv[n++] = budget;
	}
	argv[n++] = "--";
	argv[n++] = h_prog("plain_noisy");
	argv[n++] = counter();
	ck_assert(h_run(r, argv, env, 0, NULL) == 0);
}

/* spread.KEY.SUB of a record, or H_MISSING. */
static uint64_t spread(const struct h_json *rec, const char *key, const char *sub)
{
	const struct h_json *s = h_json_get(rec, "spread");
	return s ? h_count(s, key, sub) : H_MISSING;
}

START_TEST(spread_in_table_and_report)
{
	const char *rep = h_tmppath("noisy.jsonl");
	struct h_run r;
	noisy(&r, NULL, rep);
	EXPECT_EXIT(&r, 0, "three runs of plain_noisy");
	/* the table: medians, each followed by how far the farthest run is */
	EXPECT_HAS(r.err, "each figure is the median of an allocator's runs", "table title");
	EXPECT_HAS(r.err, "4,101 ±50%", "allocs: 2,052, 4,101 and 6,149");
	EXPECT_HAS(r.err, "16.0 MiB ±50%", "peak live: 8, 16 and 24 MiB");
	EXPECT_HAS(r.err, "3 runs, wall ", "runs summary");
	EXPECT_HAS(r.err, "varied between runs by up to: peak RSS ±", "runs summary");
	EXPECT_HAS(r.err, "gated on the medians", "runs summary");

	/* the report: each record says which run it is of how many, and
	 * the spread of each figure that differs between them */
	struct h_report hr;
	H_LOAD(&hr, rep);
	ck_assert_uint_eq(hr.n, 3);
	uint64_t peaks[3];
	for (size_t i = 0; i < 3; i++) {
		const struct h_json *rec = hr.rec[i];
		H_EXPECT_U64(rec, "run", i + 1);
		H_EXPECT_U64(rec, "runs", 3);
		ck_assert_uint_eq(spread(rec, "allocs", "min"), 2052);
		ck_assert_uint_eq(spread(rec, "allocs", "median"), 4101);
		ck_assert_uint_eq(spread(rec, "allocs", "max"), 6149);
		peaks[i] = h_u64(rec, "peak_rss");
		/* a figure every run agrees on is not listed */
		ck_assert_uint_eq(spread(rec, "double_frees", "min"), H_MISSING);
	}
	ck_assert_msg(peaks[0] < peaks[1] && peaks[1] < peaks[2],
		      "peak_rss %s, %s, %s: expected growing with the run", h_fmt(peaks[0]),
		      h_fmt(peaks[1]), h_fmt(peaks[2]));
	ck_assert_uint_eq(spread(hr.rec[0], "peak_rss", "median"), peaks[1]);
	ck_assert_uint_eq(spread(hr.rec[2], "peak_rss", "max"), peaks[2]);
	h_report_free(&hr);
	h_run_free(&r);
}
END_TEST

/* peak_rss is judged on its median (the second run's, about 16 MiB more
 * than the program's base), allocs in every run: a limit between the
 * median and the largest run passes for the first and fails for the
 * second.  `memcheck gate` on the stored report says the same. */
START_TEST(gate_on_the_median)
{
	/* The three runs' peaks, measured first: the limits sit between. */
	const char *rep = h_tmppath("measure.jsonl");
	struct h_run r;
	noisy(&r, NULL, rep);
	EXPECT_EXIT(&r, 0, "measuring");
	h_run_free(&r);
	struct h_report hr;
	H_LOAD(&hr, rep);
	uint64_t median = spread(hr.rec[0], "peak_rss", "median");
	uint64_t max = spread(hr.rec[0], "peak_rss", "max");
	h_report_free(&hr);
	ck_assert_msg(median != H_MISSING && max > median + 4 * MiB,
		      "peak_rss median %s, max %s: expected runs 8 MiB apart", h_fmt(median),
		      h_fmt(max));

	/* Between the median and the largest run, with room for the
	 * machine's own noise either side: 8 MiB apart by design. */
	char text[256];
	snprintf(text, sizeof text, "peak_rss <= %llu\n",
		 (unsigned long long)(median + 4 * MiB));
	const char *loose = write_tmp("loose.budget", text);
	const char *run_rep = h_tmppath("loose.jsonl");
	noisy(&r, loose, run_rep);
	EXPECT_EXIT(&r, 0, "peak_rss limit above the median, below the largest run");
	h_run_free(&r);
	/* the library failed the third run's record on its own reading;
	 * gate, like run, judges the median */
	H_LOAD(&hr, run_rep);
	ck_assert_str_eq(h_str(hr.rec[2], "verdict"), "fail");
	h_report_free(&hr);
	MC(&r, NULL, "gate", "--budget", loose, run_rep);
	ck_assert_msg(r.exit_code == 0, "gate on the stored runs: %s\n%s", h_status(&r), r.out);
	h_run_free(&r);

	snprintf(text, sizeof text, "peak_rss <= %llu\n",
		 (unsigned long long)(median - 4 * MiB));
	const char *tight = write_tmp("tight.budget", text);
	noisy(&r, tight, run_rep);
	EXPECT_EXIT(&r, 1, "peak_rss limit below the median");
	EXPECT_HAS(r.err, "FAIL 3/3", "verdict: every record of the region judged on the median");
	h_run_free(&r);

	/* counted: one run over the limit fails the region */
	const char *counted = write_tmp("counted.budget", "allocs <= 5000\n");
	noisy(&r, counted, run_rep);
	EXPECT_EXIT(&r, 1, "allocs over the limit in the third run");
	EXPECT_HAS(r.err, "FAIL 1/3", "verdict");
	h_run_free(&r);
	MC(&r, NULL, "gate", "--budget", counted, run_rep);
	ck_assert_msg(r.exit_code == 1 && strstr(r.out, "3 records, 1 failed"),
		      "gate on the stored runs: %s\n%s", h_status(&r), r.out);
	h_run_free(&r);
}
END_TEST

/* -n auto (the default): an allocator whose records say it gives memory
 * back on a timer runs three times, one that does not, once; jemalloc's
 * decay turned off makes it one of those. */
START_TEST(auto_runs_timed_allocators_three_times)
{
	if (!h_allocator(H_JEMALLOC, NULL))
		return;
	const char *rep = h_tmppath("auto.jsonl");
	struct h_run r;
	const char *env[] = { "MEMCHECK_TEXT=none", "MALLOC_CONF=", NULL };
	MC(&r, env, "run", "-a", "glibc,jemalloc", "--report", rep, "--", h_prog("plain_noisy"),
	   counter());
	EXPECT_EXIT(&r, 0, "auto");
	EXPECT_HAS(r.err, "jemalloc gives freed memory back on a timer (after up to 10000 ms)",
		   "said why");
	EXPECT_HAS(r.err, "  glibc          1 run,", "glibc once");
	EXPECT_HAS(r.err, "  jemalloc       3 runs", "jemalloc three times");
	struct h_report hr;
	H_LOAD(&hr, rep);
	ck_assert_uint_eq(hr.n, 4);
	H_EXPECT_U64(hr.rec[0], "timed_purge_ms", 0);       /* glibc */
	H_EXPECT_U64(hr.rec[0], "runs", 1);
	for (size_t i = 1; i < 4; i++) {
		H_EXPECT_U64(hr.rec[i], "timed_purge_ms", 10000);
		H_EXPECT_U64(hr.rec[i], "runs", 3);
	}
	h_report_free(&hr);
	h_run_free(&r);

	const char *fixed[] = { "MEMCHECK_TEXT=none", "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1",
				NULL };
	MC(&r, fixed, "run", "-a", "jemalloc", "--report", rep, "--", h_prog("plain_noisy"),
	   counter());
	EXPECT_EXIT(&r, 0, "auto, jemalloc without decay");
	EXPECT_HAS(r.err, "  jemalloc       1 run,", "jemalloc once");
	ck_assert_msg(!strstr(r.err, "on a timer"), "said it is timed:\n%s", r.err);
	H_LOAD(&hr, rep);
	for (size_t i = 0; i < hr.n; i++)
		H_EXPECT_U64(hr.rec[i], "timed_purge_ms", 0);
	h_report_free(&hr);
	h_run_free(&r);

	/* -n overrides: once is once */
	MC(&r, env, "run", "-n", "1", "-a", "jemalloc", "--", h_prog("plain_noisy"), counter());
	EXPECT_HAS(r.err, "  jemalloc       1 run,", "-n 1");
	h_run_free(&r);
}
END_TEST

/* Each allocator says whether it gives memory back on a timer, by its
 * own configuration. */
START_TEST(timed_purge_of_each_allocator)
{
	static const struct {
		int alloc;
		const char *env;
		uint64_t ms;
	} cases[] = {
		{ H_GLIBC, NULL, 0 },
		{ H_TCMALLOC, NULL, 0 },
		{ H_JEMALLOC, "MALLOC_CONF=", 10000 },
		{ H_JEMALLOC, "MALLOC_CONF=dirty_decay_ms:2000,muzzy_decay_ms:3000", 3000 },
		{ H_JEMALLOC, "MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0", 0 },
		{ H_MIMALLOC, NULL, 500 },     /* its segment cache's delay */
		{ H_MIMALLOC, "MIMALLOC_SEGMENT_DECOMMIT_DELAY=0", 25 },
		{ H_MIMALLOC, "MIMALLOC_ALLOW_DECOMMIT=0", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *so;
		if (!h_allocator(cases[i].alloc, &so))
			continue;
		const char *report = h_tmppath("timed.jsonl");
		unlink(report);
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      cases[i].env, NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_clean"));
		struct h_report hr;
		H_LOAD(&hr, report);
		ck_assert_msg(hr.n == 1 && h_u64(hr.rec[0], "timed_purge_ms") == cases[i].ms,
			      "%s %s: timed_purge_ms = %s, expected %llu", so ? so : "glibc",
			      cases[i].env ? cases[i].env : "", hr.n ? h_fmt(h_u64(hr.rec[0],
			      "timed_purge_ms")) : "no record", (unsigned long long)cases[i].ms);
		h_report_free(&hr);
		h_run_free(&r);
	}
}
END_TEST

/* The table's lost column: definitely and indirectly lost together,
 * which is the same however the scan splits a cycle. */
START_TEST(lost_column_adds_indirect)
{
	const char *rep = h_tmppath("cycle.jsonl");
	struct h_run r;
	MC(&r, NULL, "run", "-a", "glibc", "--report", rep, "--", h_prog("plain_leak_cycle"));
	EXPECT_EXIT(&r, 1, "a leaked cycle");
	EXPECT_HAS(r.err, "lost (d+i)", "column");
	struct h_report hr;
	H_LOAD(&hr, rep);
	const struct h_json *rec = h_record(&hr, "process", -1);
	ck_assert_ptr_nonnull(rec);
	uint64_t d = h_count(rec, "definitely_lost", "bytes"), i = h_count(rec, "indirectly_lost", "bytes");
	ck_assert_msg(d > 0 && i > 0, "definitely %s, indirectly %s", h_fmt(d), h_fmt(i));
	char want[64];
	snprintf(want, sizeof want, " %llu B ", (unsigned long long)(d + i));
	if (d + i >= 1024)
		snprintf(want, sizeof want, " %.1f KiB ", (double)(d + i) / 1024);
	EXPECT_HAS(r.err, want, "lost column = definitely + indirectly");
	h_report_free(&hr);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("runs", 120);
	tcase_add_test(tc, spread_in_table_and_report);
	tcase_add_test(tc, gate_on_the_median);
	tcase_add_test(tc, auto_runs_timed_allocators_three_times);
	tcase_add_test(tc, timed_purge_of_each_allocator);
	tcase_add_test(tc, lost_column_adds_indirect);
	return h_run_suite(NULL);
}
