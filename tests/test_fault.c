/*
 * test_fault.c - failure injection (lib/fault.c): each control from the
 * API and from MEMCHECK_FAIL_*, the NULL/errno contract of every
 * allocation function, failed_allocs and injected in the report, the
 * failure log, and memcheck_fault() as a breakpoint.  The program is
 * tests/prog/fault.c, which checks what only it can see; and failure
 * injection from the environment never fails memcheck's own start-up
 * probe (tests/prog/plain_errors).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *const quiet[] = { "MEMCHECK_TEXT=none", NULL };

/* A case of tests/prog/fault, which checks its figures itself and names
 * the wrong ones; count-only mode takes its own short path through the
 * wrappers, which must still give way to fault injection. */
#define FAULT(kase, ...)                                                       \
	{ kase, .allocators = H_ONLY(H_GLIBC),                                  \
	  .run = { .prog = "fault", .args = H_LIST(kase), .no_report = true, __VA_ARGS__ } }
#define COUNTING .env = H_LIST("MEMCHECK_TRACK=0")

static const struct h_case cases[] = {
	FAULT("transient"), FAULT("persistent"), FAULT("family"), FAULT("site"),
	FAULT("site_file"), FAULT("expect"), FAULT("family", COUNTING),
	FAULT("transient", COUNTING),
};

/* "REGION pattern: 0101..." from the program's stdout. */
static char *pattern_of(const char *out, const char *region)
{
	char key[64];
	snprintf(key, sizeof key, "%s pattern: ", region);
	const char *at = strstr(out, key);
	ck_assert_msg(at != NULL, "no %s pattern in:\n%s", region, out);
	return strndup(at + strlen(key), 200);
}

static char *random_pattern(const char *seed, const char *const *env)
{
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fault"), "random", seed);
	ck_assert_msg(r.exit_code == 0, "fault random: %s\n%s%s", h_status(&r), r.out, r.err);
	char *p = pattern_of(r.out, "random");
	h_run_free(&r);
	return p;
}

static int ones(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '1';
	return n;
}

START_TEST(random_same_seed_same_failures)
{
	char *a = random_pattern("42", quiet), *b = random_pattern("42", quiet);
	char *c = random_pattern("43", quiet);
	ck_assert_msg(strcmp(a, b) == 0, "seed 42 twice:\n%s\n%s", a, b);
	ck_assert_msg(strcmp(a, c) != 0, "seeds 42 and 43 fail the same calls");
	/* p = 0.25 of 200: far from 0 and from 200 */
	ck_assert_msg(ones(a) > 20 && ones(a) < 80, "%d of 200 failed at p 0.25", ones(a));
	free(a);
	free(b);
	free(c);
}
END_TEST

/* The variables: the Nth of one region by name, probability by seed. */
START_TEST(from_the_environment)
{
	const char *env[] = { "MEMCHECK_TEXT=none", "MEMCHECK_FAIL_REGION=targ*",
			      "MEMCHECK_FAIL_NTH=5", NULL };
	const char *report = h_tmppath("env.jsonl");
	const char *env2[] = { "MEMCHECK_TEXT=none", "MEMCHECK_FAIL_REGION=target",
			       "MEMCHECK_FAIL_NTH=5", "MEMCHECK_FAIL_PERSISTENT=1",
			       h_env("MEMCHECK_REPORT=%s", report), NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fault"), "env");
	ck_assert_msg(r.exit_code == 0, "%s\n%s%s", h_status(&r), r.out, r.err);
	char *other = pattern_of(r.out, "other"), *target = pattern_of(r.out, "target");
	ck_assert_int_eq(ones(other), 0);
	ck_assert_int_eq(ones(target), 1);
	ck_assert_int_eq(target[4], '1');
	free(other);
	free(target);
	h_run_free(&r);

	H_RUN(&r, 0, NULL, env2, h_prog("fault"), "env");
	ck_assert_msg(r.exit_code == 0, "%s\n%s%s", h_status(&r), r.out, r.err);
	target = pattern_of(r.out, "target");
	ck_assert_int_eq(ones(target), 196);
	free(target);
	h_run_free(&r);
	struct h_report rep;
	H_LOAD(&rep, report);
	const struct h_json *rec = h_record(&rep, "target", 0);
	ck_assert_ptr_nonnull(rec);
	H_EXPECT_U64(rec, "injected", 196);
	H_EXPECT_U64(rec, "failed_allocs", 196);
	H_EXPECT_U64(rec, "alloc_calls", 200);
	H_EXPECT_STR(rec, "region_id", "p/2");
	const struct h_json *st = h_json_get(rec, "injected_stacks");
	ck_assert_msg(st && st->n == 1, "injected_stacks: one stack expected");
	const struct h_json *fr = h_json_at(h_json_get(h_json_at(st, 0), "stack"), 0);
	ck_assert_ptr_nonnull(fr);
	ck_assert_str_eq(h_str(fr, "function"), "pattern");
	rec = h_record(&rep, "other", 0);
	ck_assert_ptr_nonnull(rec);
	H_EXPECT_U64(rec, "injected", 0);
	h_report_free(&rep);

	/* probability: same seed, same failures, from the environment too */
	const char *envp[] = { "MEMCHECK_TEXT=none", "MEMCHECK_FAIL_PROBABILITY=0.1",
			       "MEMCHECK_FAIL_SEED=7", NULL };
	H_RUN(&r, 0, NULL, envp, h_prog("fault"), "env");
	char *a = pattern_of(r.out, "target");
	h_run_free(&r);
	H_RUN(&r, 0, NULL, envp, h_prog("fault"), "env");
	char *b = pattern_of(r.out, "target");
	h_run_free(&r);
	ck_assert_str_eq(a, b);
	ck_assert_msg(ones(a) > 3 && ones(a) < 50, "%d of 200 at p 0.1", ones(a));
	free(a);
	free(b);
}
END_TEST

/* MEMCHECK_FAIL_LOG: one line per failure, written as it happens. */
START_TEST(failure_log)
{
	const char *log = h_tmppath("fail.log");
	const char *env[] = { "MEMCHECK_TEXT=none", "MEMCHECK_FAIL_REGION=target",
			      "MEMCHECK_FAIL_NTH=7", h_env("MEMCHECK_FAIL_LOG=%s", log), NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fault"), "env");
	h_run_free(&r);
	struct h_report rep;
	H_LOAD(&rep, log);
	ck_assert_uint_eq(rep.n, 1);
	H_EXPECT_U64(rep.rec[0], "index", 7);
	H_EXPECT_STR(rep.rec[0], "region", "target");
	H_EXPECT_STR(rep.rec[0], "region_id", "p/2");
	h_report_free(&rep);
}
END_TEST

/* The text report says how many failures were injected, and where. */
START_TEST(text_report)
{
	const char *env[] = { "MEMCHECK_TEXT=full", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("fault"), "transient");
	ck_assert_msg(strstr(r.err, "injected failures: 1") != NULL, "%s", r.err);
	ck_assert_msg(strstr(r.err, "allocation failures injected at:") != NULL, "%s", r.err);
	h_run_free(&r);
}
END_TEST

START_TEST(breakpoint_symbol_exported)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "nm -D --defined-only %s | grep -qw memcheck_fault", h_lib());
	ck_assert_msg(system(cmd) == 0, "memcheck_fault is not exported by %s", h_lib());
}
END_TEST

/* gdb: break memcheck_fault lands at the injected failure. */
START_TEST(gdb_breaks_there)
{
	if (system("command -v gdb >/dev/null 2>&1") != 0) {
		fprintf(stderr, "test_fault: gdb not installed; breakpoint checked by nm only\n");
		return;
	}
	struct h_run r;
	const char *argv[] = { "/bin/sh", "-c",
			       h_env("gdb -nx -batch -ex 'set breakpoint pending on' -ex 'break memcheck_fault' -ex run -ex bt "
				     "--args %s breakpoint 2>&1", h_prog("fault")),
			       NULL };
	ck_assert(h_run(&r, argv, quiet, 0, NULL) == 0);
	ck_assert_msg(strstr(r.out, "Breakpoint 1, ") && strstr(r.out, "memcheck_fault"),
		      "gdb did not stop in memcheck_fault:\n%s", r.out);
	ck_assert_msg(strstr(r.out, "site_victim"), "the backtrace does not show the call:\n%s",
		      r.out);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 10: MEMCHECK_FAIL_NTH=1, _PROBABILITY=1 and _SITE='*'
 * failed the malloc memcheck makes at start-up to see that it is
 * reached, so it took itself for bypassed and counted nothing.  Under
 * each allocator and each setting the program's own two allocation
 * calls are the ones counted and failed. */
static const char *const fail_first[][2] = {
	{ "MEMCHECK_FAIL_NTH=1", "1" },        /* the setting, failures expected */
	{ "MEMCHECK_FAIL_PROBABILITY=1", "2" },
	{ "MEMCHECK_FAIL_SITE=*", "2" },
};

START_TEST(start_up_probe_never_failed)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	for (size_t k = 0; k < sizeof fail_first / sizeof fail_first[0]; k++) {
		const char *report = h_tmppath("probe.jsonl");
		const char *env[] = { h_env("MEMCHECK_REPORT=%s", report), "MEMCHECK_TEXT=none",
				      fail_first[k][0], NULL };
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, h_prog("plain_errors"), "leak");
		ck_assert_msg(r.exit_code == 0 && r.err_len == 0,
			      "%s under %s: %s; stderr:\n%s", fail_first[k][0],
			      h_allocators[_i].name, h_status(&r), r.err);
		struct h_report rep;
		H_LOAD(&rep, report);
		const struct h_json *rec = h_record(&rep, "process", r.pid);
		ck_assert_msg(rec != NULL, "%s: no \"process\" record", fail_first[k][0]);
		/* plain_errors leak: malloc(100000), then malloc(10) freed */
		H_EXPECT_U64(rec, "alloc_calls", 2);
		H_EXPECT_U64(rec, "injected", strtoull(fail_first[k][1], NULL, 10));
		H_EXPECT_U64(rec, "failed_allocs", strtoull(fail_first[k][1], NULL, 10));
		ck_assert_msg(h_nviolations(rec) == 0, "%s: the region fails (bypassed?)",
			      fail_first[k][0]);
		h_report_free(&rep);
		h_run_free(&r);
	}
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("fault", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, random_same_seed_same_failures);
	tcase_add_test(tc, from_the_environment);
	tcase_add_test(tc, failure_log);
	tcase_add_test(tc, text_report);
	tcase_add_test(tc, breakpoint_symbol_exported);
	tcase_add_test(tc, gdb_breaks_there);
	tcase_add_loop_test(tc, start_up_probe_never_failed, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
