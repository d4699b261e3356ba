/*
 * test_valgrind.c - memcheck's allocs, frees and bytes allocated equal
 * valgrind's "total heap usage" for the same program (tests/prog/
 * plain_mix: a varied, stdio-free mix; tests/prog/plain_errors leak).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Compare valgrind's and memcheck's counts for plain program NAME ARG. */
static void compare(const char *name, const char *arg)
{
	const char *vg = h_valgrind_path();
	if (!vg) {
		printf("note: valgrind not installed; skipping %s\n", name);
		return;
	}
	const char *prog = h_prog(name);
	struct h_run v;
	H_RUN(&v, 0, NULL, NULL, vg, "--leak-check=no", prog, arg);
	ck_assert_msg(v.exit_code == 0, "valgrind %s: %s; stderr:\n%s", name, h_status(&v), v.err);
	uint64_t va, vf, vb;
	ck_assert_msg(h_valgrind_heap_usage(v.err, &va, &vf, &vb),
		      "no \"total heap usage\" line in valgrind's output:\n%s", v.err);

	const char *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none", NULL };
	struct h_run m;
	H_RUN(&m, H_PRELOAD, NULL, env, prog, arg);
	ck_assert_msg(m.exit_code == 0, "%s under memcheck: %s; stderr:\n%s", name,
		      h_status(&m), m.err);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "process", m.pid);
	ck_assert_msg(rec != NULL, "%s: no \"process\" record", name);
	ck_assert_msg(h_u64(rec, "allocs") == va && h_u64(rec, "frees") == vf &&
		      h_u64(rec, "bytes_allocated") == vb,
		      "%s: memcheck counted %s allocs, %s frees, %s bytes allocated; "
		      "valgrind %llu allocs, %llu frees, %llu bytes allocated", name,
		      h_fmt(h_u64(rec, "allocs")), h_fmt(h_u64(rec, "frees")),
		      h_fmt(h_u64(rec, "bytes_allocated")), (unsigned long long)va,
		      (unsigned long long)vf, (unsigned long long)vb);
	ck_assert_msg(va > 1000 || strcmp(name, "plain_mix") != 0,
		      "plain_mix made only %llu allocations", (unsigned long long)va);
	h_report_free(&rep);
	h_run_free(&m);
	h_run_free(&v);
}

START_TEST(test_mix_matches_valgrind_heap_usage)
{
	compare("plain_mix", "3000");
}
END_TEST

START_TEST(test_leaking_program_matches_valgrind_heap_usage)
{
	compare("plain_errors", "leak");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("valgrind");
	TCase *tc = tcase_create("valgrind");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mix_matches_valgrind_heap_usage);
	tcase_add_test(tc, test_leaking_program_matches_valgrind_heap_usage);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
