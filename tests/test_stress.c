/*
 * test_stress.c - the stress test (issue 14): tests/prog/stress's random
 * mix of the malloc family over threads that start, end and fork, under
 * the four allocators, its figures compared with the program's own
 * count; and, in its long form, the programs of the other hardening
 * cases again and again (forklocks, signals, plain_sigtimer,
 * plain_bigrecords, plain_errors interior).  A difference, a hang or a
 * crash fails it.  And a churn thread that ends late, held on purpose,
 * is waited for before the mix's region (a_late_churn_thread_is_waited_for).
 *
 * STRESS_SECONDS (default 1) is each stress run's length and
 * STRESS_ROUNDS (default 1) the number of rounds, each with a seed of
 * its own.  make check runs the default, the mix alone (the other
 * programs have their tests there); make stress runs minutes of it.
 *
 * Not a table: how many runs there are and how long each is are the
 * environment's (rounds of seeds), not the file's.  The runs are
 * H_EXEC's, the allocators the one list's.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static double seconds(void)
{
	const char *s = getenv("STRESS_SECONDS");
	return s && atof(s) > 0 ? atof(s) : 1;
}

static int rounds(void)
{
	const char *s = getenv("STRESS_ROUNDS");
	return s && atoi(s) > 0 ? atoi(s) : 1;
}

/* The long form: more than the default. */
static bool long_form(void)
{
	return rounds() > 1 || seconds() > 1;
}

/* Room for a loaded machine: four times the run's length, and a minute. */
static void allow_time(void)
{
	char t[32];
	snprintf(t, sizeof t, "%.0f", seconds() * 4 + 60);
	setenv("H_TIMEOUT", t, 1);
}

/* Every record of x's report is whole, and none saw a heap error. */
static void expect_records_clean(const struct h_res *x)
{
	ck_assert_msg(x->rep.n > 0, "%s: no records", x->label);
	for (size_t i = 0; i < x->rep.n; i++) {
		const struct h_json *r = x->rep.rec[i];
		ck_assert_msg(h_u64(r, "double_frees") == 0 && h_u64(r, "invalid_frees") == 0,
			      "%s: record \"%s\" of pid %s has heap errors", x->label,
			      h_str(r, "name"), h_fmt(h_u64(r, "pid")));
	}
}

START_TEST(random_mix_counts_match_the_program)
{
	if (!h_allocator(_i, NULL))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		struct h_res x;
		H_EXEC(&x, .prog = "stress", .alloc = _i, .flags = H_PRELOAD,
		       .args = H_LIST(h_env("%g", seconds()), "6", h_env("%d", round + 1)));
		h_expect_exit(&x, 0);
		ck_assert_msg(strstr(x.r.out, "mix: ok"), "%s, seed %d: stdout \"%s\"; stderr:\n%s",
			      x.label, round + 1, x.r.out, x.r.err);
		expect_records_clean(&x);
		h_res_free(&x);
	}
}
END_TEST

/* A detached churn thread held 200 ms after it said it is done, as one
 * descheduled at its sem_post is under load: its free and the C
 * library's at its end (the DTVs of the cached stacks it trims) are the
 * program's, and fell into the mix's region, a free or more beyond the
 * program's count, until the program waited for its threads to go
 * (random_mix's flake, "frees: memcheck N+1, the program N").  Without
 * the wait this fails under every allocator, every time. */
START_TEST(a_late_churn_thread_is_waited_for)
{
	if (!h_allocator(_i, NULL))
		return;
	struct h_res x;
	H_EXEC(&x, .prog = "stress", .alloc = _i, .flags = H_PRELOAD,
	       .args = H_LIST("0.4", "3", "1", "200"));
	h_expect_exit(&x, 0);
	ck_assert_msg(strstr(x.r.out, "mix: ok"), "%s: stdout \"%s\"; stderr:\n%s", x.label,
		      x.r.out, x.r.err);
	expect_records_clean(&x);
	h_res_free(&x);
}
END_TEST

/* The long form only: every round, forks against every lock, and the
 * hardening cases' programs, under each allocator. */
START_TEST(hardening_programs_again)
{
	if (!long_form() || !h_allocator(_i, NULL))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		const char *forks = h_env("%d", (int)(seconds() * 2) + 12);
		struct h_res x;
		H_EXEC(&x, .prog = "forklocks", .args = H_LIST(forks), .alloc = _i, .flags = H_PRELOAD,
		       .env = H_LIST("MEMCHECK_FAIL_SITE=no_such_function"));
		h_expect_exit(&x, 0);
		h_res_free(&x);

		H_EXEC(&x, .prog = "signals", .alloc = _i, .flags = H_PRELOAD, .no_report = true,
		       .text = "summary");
		h_expect_exit(&x, 0);
		ck_assert_msg(!strstr(x.r.err, "double free"), "%s: stderr:\n%s", x.label, x.r.err);
		h_res_free(&x);

		H_EXEC(&x, .prog = "plain_bigrecords", .args = H_LIST("8"), .alloc = _i,
		       .flags = H_PRELOAD, .env = H_LIST("MEMCHECK_MAX_LEAKS=256"));
		h_expect_exit(&x, 0);
		ck_assert_msg(x.rep.n == 9, "%s: %zu records, expected 9", x.label, x.rep.n);
		h_res_free(&x);

		H_EXEC(&x, .prog = "plain_errors", .args = H_LIST("interior"), .alloc = _i,
		       .flags = H_PRELOAD, .no_report = true, .text = "summary");
		h_expect_exit(&x, 0);
		ck_assert_msg(strstr(x.r.out, "continued"), "%s: stdout \"%s\"", x.label, x.r.out);
		h_res_free(&x);
	}
}
END_TEST

/* The long form only: the signal timer under mimalloc, the one that
 * survives a handler's malloc in the middle of its own. */
START_TEST(signal_timer_under_mimalloc)
{
	if (!long_form() || !h_allocator(H_MIMALLOC, NULL))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		struct h_res x;
		H_EXEC(&x, .prog = "plain_sigtimer", .args = H_LIST(h_env("%g", seconds())),
		       .alloc = H_MIMALLOC, .flags = H_PRELOAD);
		h_expect_exit(&x, 0);
		const char *d = strstr(x.r.err, "dups=");
		uint64_t dups = d ? strtoull(d + 5, NULL, 10) : UINT64_MAX;
		const struct h_json *rec = h_rec(&x, "process");
		const char *a = strstr(x.r.err, "allocs=");
		ck_assert_msg(a && h_u64(rec, "allocs") == strtoull(a + 7, NULL, 10),
			      "allocs %s, the program said %s", h_fmt(h_u64(rec, "allocs")), x.r.err);
		ck_assert_msg(h_u64(rec, "double_frees") <= dups && h_u64(rec, "invalid_frees") == 0,
			      "%s double frees, %s invalid frees; mimalloc handed a live block out "
			      "again %llu times", h_fmt(h_u64(rec, "double_frees")),
			      h_fmt(h_u64(rec, "invalid_frees")), (unsigned long long)dups);
		h_res_free(&x);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("stress", 0);
	/* check's own limit: the runs' H_TIMEOUT times the programs run,
	 * rounds of them */
	tcase_set_timeout(tc, (double)rounds() * (seconds() * 40 + 300));
	tcase_add_loop_test(tc, random_mix_counts_match_the_program, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, a_late_churn_thread_is_waited_for, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, hardening_programs_again, 0, H_NALLOCATORS);
	tcase_add_test(tc, signal_timer_under_mimalloc);
	return h_run_suite(NULL);
}
