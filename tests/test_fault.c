/*
 * test_fault.c - failure injection (lib/fault.c): each control from the
 * API and from MEMCHECK_FAIL_*, the NULL/errno contract of every
 * allocation function, failed_allocs and injected in the report, the
 * failure log, and memcheck_fault() as a breakpoint.  The program is
 * tests/prog/fault.c, which checks what only it can see; and failure
 * injection from the environment never fails memcheck's own start-up
 * probe (tests/prog/plain_errors).
 *
 * A run judged alone is a row.  Runs compared with each other (the same
 * seed twice, another seed) are tests of H_EXEC steps; so is the check
 * of the exported symbol, which runs no program.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* A case of tests/prog/fault, which checks its figures itself and names
 * the wrong ones; count-only mode takes its own short path through the
 * wrappers, which must still give way to fault injection. */
#define FAULT(kase, ...)                                                       \
	{ kase, .allocators = H_ONLY(H_GLIBC),                                  \
	  .run = { .prog = "fault", .args = H_LIST(kase), .no_report = true, __VA_ARGS__ } }
#define COUNTING .env = H_LIST("MEMCHECK_TRACK=0")

/* "REGION pattern: 0101..." from the program's stdout. */
static char *pattern_of(const char *out, const char *region)
{
	char key[64];
	snprintf(key, sizeof key, "%s pattern: ", region);
	const char *at = strstr(out, key);
	ck_assert_msg(at != NULL, "no %s pattern in:\n%s", region, out);
	return strndup(at + strlen(key), 200);
}

/* The REGION pattern of fault CASE [SEED] with env, which must exit 0. */
static char *pattern(const char *region, const char *const *args, const char *const *env)
{
	struct h_res x;
	H_EXEC(&x, .prog = "fault", .args = args, .env = env, .no_report = true);
	h_expect_exit(&x, 0);
	char *p = pattern_of(x.r.out, region);
	h_res_free(&x);
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
	char *a = pattern("random", H_LIST("random", "42"), NULL);
	char *b = pattern("random", H_LIST("random", "42"), NULL);
	char *c = pattern("random", H_LIST("random", "43"), NULL);
	ck_assert_msg(strcmp(a, b) == 0, "seed 42 twice:\n%s\n%s", a, b);
	ck_assert_msg(strcmp(a, c) != 0, "seeds 42 and 43 fail the same calls");
	/* p = 0.25 of 200: far from 0 and from 200 */
	ck_assert_msg(ones(a) > 20 && ones(a) < 80, "%d of 200 failed at p 0.25", ones(a));
	free(a);
	free(b);
	free(c);
}
END_TEST

/* probability: same seed, same failures, from the environment too */
START_TEST(probability_from_the_environment)
{
	const char *const *env = H_LIST("MEMCHECK_FAIL_PROBABILITY=0.1", "MEMCHECK_FAIL_SEED=7");
	char *a = pattern("target", H_LIST("env"), env), *b = pattern("target", H_LIST("env"), env);
	ck_assert_str_eq(a, b);
	ck_assert_msg(ones(a) > 3 && ones(a) < 50, "%d of 200 at p 0.1", ones(a));
	free(a);
	free(b);
}
END_TEST

/* the 5th call of the regions named targ*: target's alone */
H_CHECK(fifth_of_target_failed)
{
	char *other = pattern_of(x->r.out, "other"), *target = pattern_of(x->r.out, "target");
	ck_assert_int_eq(ones(other), 0);
	ck_assert_int_eq(ones(target), 1);
	ck_assert_int_eq(target[4], '1');
	free(other);
	free(target);
}

/* from the 5th on, persistent: 196 of 200, one stack, at pattern() */
H_CHECK(all_from_the_fifth_failed)
{
	char *target = pattern_of(x->r.out, "target");
	ck_assert_int_eq(ones(target), 196);
	free(target);
	const struct h_json *st = h_json_get(rec, "injected_stacks");
	ck_assert_msg(st && st->n == 1, "injected_stacks: one stack expected");
	const struct h_json *fr = h_json_at(h_json_get(h_json_at(st, 0), "stack"), 0);
	ck_assert_ptr_nonnull(fr);
	ck_assert_str_eq(h_str(fr, "function"), "pattern");
}

/* MEMCHECK_FAIL_LOG's path, named by the row's setup */
static const char *fail_log;

H_SETUP(log_to_a_file)
{
	static const char *env[] = { "MEMCHECK_FAIL_REGION=target", "MEMCHECK_FAIL_NTH=7",
				     NULL, NULL };
	fail_log = h_tmppath("fail.log");
	env[2] = h_env("MEMCHECK_FAIL_LOG=%s", fail_log);
	run->env = env;
	return true;
}

/* MEMCHECK_FAIL_LOG: one line per failure, written as it happens. */
H_CHECK(one_line_logged)
{
	struct h_report rep;
	H_LOAD(&rep, fail_log);
	ck_assert_uint_eq(rep.n, 1);
	H_EXPECT_U64(rep.rec[0], "index", 7);
	H_EXPECT_STR(rep.rec[0], "region", "target");
	H_EXPECT_STR(rep.rec[0], "region_id", "p/2");
	h_report_free(&rep);
}

/* gdb on fault breakpoint: break memcheck_fault, run, bt */
H_SETUP(under_gdb)
{
	if (system("command -v gdb >/dev/null 2>&1") != 0) {
		printf("note: gdb not installed; breakpoint checked by nm only\n");
		return false;
	}
	if (!h_can_ptrace()) {
		printf("note: gdb cannot trace here (ptrace refused); breakpoint checked by nm "
		       "only\n");
		return false;
	}
	static const char *args[] = { "-c", NULL, NULL };
	args[1] = h_env("gdb -nx -batch -ex 'set breakpoint pending on' -ex 'break memcheck_fault' "
			"-ex run -ex bt --args %s breakpoint 2>&1", h_prog("fault"));
	run->args = args;
	return true;
}

START_TEST(breakpoint_symbol_exported)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "nm -D --defined-only %s | grep -qw memcheck_fault", h_lib());
	ck_assert_msg(system(cmd) == 0, "memcheck_fault is not exported by %s", h_lib());
}
END_TEST

/* Issue 14, item 10: MEMCHECK_FAIL_NTH=1, _PROBABILITY=1 and _SITE='*'
 * failed the malloc memcheck makes at start-up to see that it is
 * reached, so it took itself for bypassed and counted nothing.  Under
 * each allocator and each setting the program's own two allocation
 * calls are the ones counted and failed. */
H_CHECK(nothing_said)
{
	ck_assert_msg(x->r.err_len == 0, "%s: stderr:\n%s", x->label, x->r.err);
	ck_assert_msg(h_nviolations(rec) == 0, "%s: the region fails (bypassed?)", x->label);
}

/* A case of tests/prog/fault, which checks its figures itself and names
 * the wrong ones; count-only mode takes its own short path through the
 * wrappers, which must still give way to fault injection. */
#define FAULT(kase, ...)                                                       \
	{ kase, .allocators = H_ONLY(H_GLIBC),                                  \
	  .run = { .prog = "fault", .args = H_LIST(kase), .no_report = true, __VA_ARGS__ } }
#define COUNTING .env = H_LIST("MEMCHECK_TRACK=0")
/* plain_errors leak under each allocator with one setting: malloc(100000),
 * then malloc(10) freed, the two counted and n of them failed */
#define PROBE(setting, n)                                                      \
	{ setting, .run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD, \
			    .env = H_LIST(setting) },                                  \
	  .want = { { "alloc_calls", 2 }, { "injected", n }, { "failed_allocs", n } },  \
	  .check = nothing_said }

static const struct h_case cases[] = {
	FAULT("transient"), FAULT("persistent"), FAULT("family"), FAULT("site"),
	FAULT("site_file"), FAULT("expect"), FAULT("family", COUNTING),
	FAULT("transient", COUNTING), FAULT("transient_late", COUNTING),
	/* the variables: the Nth of one region by name */
	{ "MEMCHECK_FAIL_REGION=targ*", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fault", .args = H_LIST("env"), .no_report = true,
		   .env = H_LIST("MEMCHECK_FAIL_REGION=targ*", "MEMCHECK_FAIL_NTH=5") },
	  .check = fifth_of_target_failed },
	{ "MEMCHECK_FAIL_PERSISTENT=1", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fault", .args = H_LIST("env"),
		   .env = H_LIST("MEMCHECK_FAIL_REGION=target", "MEMCHECK_FAIL_NTH=5",
				 "MEMCHECK_FAIL_PERSISTENT=1") },
	  .record = "target",
	  .want = { { "injected", 196 }, { "failed_allocs", 196 }, { "alloc_calls", 200 },
		    { "region_id", .str = "p/2" }, { "injected", 0, .rec = "other" } },
	  .check = all_from_the_fifth_failed },
	{ "MEMCHECK_FAIL_LOG", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fault", .args = H_LIST("env"), .no_report = true },
	  .setup = log_to_a_file, .check = one_line_logged },
	/* the text report says how many failures were injected, and where */
	{ "MEMCHECK_TEXT=full", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "fault", .args = H_LIST("transient"), .no_report = true,
		   .env = H_LIST("MEMCHECK_TEXT=full") },
	  .err = H_LIST("injected failures: 1", "allocation failures injected at:") },
	/* gdb: break memcheck_fault lands at the injected failure */
	{ "gdb", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "/bin/sh", .no_report = true }, .setup = under_gdb, .exit = H_EXIT_ANY,
	  .out = H_LIST("Breakpoint 1, ", "memcheck_fault", "site_victim") },
	/* issue 14, item 10: MEMCHECK_FAIL_NTH=1, _PROBABILITY=1 and
	 * _SITE='*' failed the malloc memcheck makes at start-up to see that
	 * it is reached, so it took itself for bypassed and counted nothing */
	PROBE("MEMCHECK_FAIL_NTH=1", 1),
	PROBE("MEMCHECK_FAIL_PROBABILITY=1", 2),
	PROBE("MEMCHECK_FAIL_SITE=*", 2),
};

int main(void)
{
	TCase *tc = h_tcase("fault", 30);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, random_same_seed_same_failures);
	tcase_add_test(tc, probability_from_the_environment);
	tcase_add_test(tc, breakpoint_symbol_exported);
	return h_run_suite(NULL);
}
