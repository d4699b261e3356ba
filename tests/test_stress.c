/*
 * test_stress.c - the stress test (issue 14): tests/prog/stress's random
 * mix of the malloc family over threads that start, end and fork, under
 * the four allocators, its figures compared with the program's own
 * count; and, in its long form, the programs of the other hardening
 * cases again and again (forklocks, signals, plain_sigtimer,
 * plain_bigrecords, plain_errors interior).  A difference, a hang or a
 * crash fails it.
 *
 * STRESS_SECONDS (default 1) is each stress run's length and
 * STRESS_ROUNDS (default 1) the number of rounds, each with a seed of
 * its own.  make check runs the default, the mix alone (the other
 * programs have their tests there); make stress runs minutes of it.
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

/* Every record of the report is whole, and none saw a heap error. */
static void expect_records_clean(const char *report, const char *what)
{
	struct h_report rep;
	H_LOAD(&rep, report);
	ck_assert_msg(rep.n > 0, "%s: no records", what);
	for (size_t i = 0; i < rep.n; i++) {
		ck_assert_msg(h_u64(rep.rec[i], "double_frees") == 0 &&
			      h_u64(rep.rec[i], "invalid_frees") == 0,
			      "%s: record \"%s\" of pid %s has heap errors", what,
			      h_str(rep.rec[i], "name"), h_fmt(h_u64(rep.rec[i], "pid")));
	}
	h_report_free(&rep);
}

START_TEST(random_mix_counts_match_the_program)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		const char *report = h_tmppath("mix.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("stress"), h_env("%g", seconds()), "6",
		      h_env("%d", round + 1));
		ck_assert_msg(!r.timed_out && r.exit_code == 0 && strstr(r.out, "mix: ok"),
			      "stress under %s, seed %d: %s; stdout \"%s\"; stderr:\n%s",
			      h_allocators[_i].name, round + 1, h_status(&r), r.out, r.err);
		expect_records_clean(report, "stress");
		h_run_free(&r);
	}
}
END_TEST

/* The long form only: every round, forks against every lock, and the
 * hardening cases' programs, under each allocator. */
START_TEST(hardening_programs_again)
{
	const char *so;
	if (!long_form())
		return;
	if (!h_allocator(_i, &so))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		const char *report = h_tmppath("again.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      "MEMCHECK_FAIL_SITE=no_such_function", NULL };
		const char *forks = h_env("%d", (int)(seconds() * 2) + 12);
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("forklocks"), forks);
		ck_assert_msg(!r.timed_out && r.exit_code == 0,
			      "forklocks %s under %s: %s; stderr:\n%s", forks,
			      h_allocators[_i].name, h_status(&r), r.err);
		h_run_free(&r);

		const char *text[] = { "MEMCHECK_TEXT=summary", NULL };
		H_RUN(&r, H_PRELOAD, so, text, h_prog("signals"));
		ck_assert_msg(r.exit_code == 0 && !strstr(r.err, "double free"),
			      "signals under %s: %s; stderr:\n%s", h_allocators[_i].name,
			      h_status(&r), r.err);
		h_run_free(&r);

		const char *big = h_tmppath("big.jsonl");
		const char *benv[] = { h_env("MEMCHECK_REPORT=%s", big), "MEMCHECK_TEXT=none",
				       "MEMCHECK_MAX_LEAKS=256", NULL };
		H_RUN(&r, H_PRELOAD, so, benv, h_prog("plain_bigrecords"), "8");
		ck_assert_msg(r.exit_code == 0, "plain_bigrecords under %s: %s",
			      h_allocators[_i].name, h_status(&r));
		struct h_report rep;
		H_LOAD(&rep, big);
		ck_assert_msg(rep.n == 9, "plain_bigrecords: %zu records, expected 9", rep.n);
		h_report_free(&rep);
		h_run_free(&r);

		H_RUN(&r, H_PRELOAD, so, text, h_prog("plain_errors"), "interior");
		ck_assert_msg(r.exit_code == 0 && strstr(r.out, "continued"),
			      "plain_errors interior under %s: %s", h_allocators[_i].name,
			      h_status(&r));
		h_run_free(&r);
	}
}
END_TEST

/* The long form only: the signal timer under mimalloc, the one that
 * survives a handler's malloc in the middle of its own. */
START_TEST(signal_timer_under_mimalloc)
{
	if (!long_form())
		return;
	const char *mi;
	if (!h_allocator(H_MIMALLOC, &mi))
		return;
	allow_time();
	for (int round = 0; round < rounds(); round++) {
		const char *report = h_tmppath("timer.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, mi, env, h_prog("plain_sigtimer"), h_env("%g", seconds()));
		ck_assert_msg(!r.timed_out && r.exit_code == 0, "plain_sigtimer: %s; stderr:\n%s",
			      h_status(&r), r.err);
		const char *d = strstr(r.err, "dups=");
		uint64_t dups = d ? strtoull(d + 5, NULL, 10) : UINT64_MAX;
		struct h_report rep;
		H_LOAD(&rep, report);
		const struct h_json *rec = h_record(&rep, "process", r.pid);
		ck_assert_msg(rec != NULL, "no \"process\" record");
		const char *a = strstr(r.err, "allocs=");
		ck_assert_msg(a && h_u64(rec, "allocs") == strtoull(a + 7, NULL, 10),
			      "allocs %s, the program said %s", h_fmt(h_u64(rec, "allocs")), r.err);
		ck_assert_msg(h_u64(rec, "double_frees") <= dups && h_u64(rec, "invalid_frees") == 0,
			      "%s double frees, %s invalid frees; mimalloc handed a live block out "
			      "again %llu times", h_fmt(h_u64(rec, "double_frees")),
			      h_fmt(h_u64(rec, "invalid_frees")), (unsigned long long)dups);
		h_report_free(&rep);
		h_run_free(&r);
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
	tcase_add_loop_test(tc, hardening_programs_again, 0, H_NALLOCATORS);
	tcase_add_test(tc, signal_timer_under_mimalloc);
	return h_run_suite(NULL);
}
