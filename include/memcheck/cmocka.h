/*
 * memcheck/cmocka.h - glue for the cmocka unit-test framework.
 *
 * One line puts every test of a group under memcheck: run the group with
 *
 *     return memcheck_cmocka_run_group_tests(tests, NULL, NULL);
 *
 * instead of cmocka_run_group_tests().  Each test function then runs in
 * a region of its own, named after the test, and a test that leaves
 * memory behind fails with cmocka's own failure, at the line that
 * allocated the block, in cmocka's console and XML output alike.
 *
 * Traps that shaped it:
 * - A failure raised in a teardown is "Test teardown failed", an error
 *   without the message in cmocka's XML: the region ends, and fails,
 *   inside the test function's own run, as cmocka's own leak check does.
 *   The region is the test function alone (the setup's blocks, freed
 *   by the teardown, are older), again as cmocka's check.
 * - cmocka calls a test with the address of its state, which lies in
 *   cmocka's per-test record just after the pointer to the test's
 *   CMUnitTest (struct CMUnitTestState, the same from cmocka 1.0 to
 *   1.1.7): the wrapper finds there which test runs, in the copy of the
 *   group made with wrappers in it, and checks that it is one.
 * - A test that fails an assertion of its own, or skips, leaves by
 *   longjmp with its region open: the teardown wrapper, which cmocka
 *   runs after every test, discards it unreported.
 * - cm_print_error() is the function cmocka gathers a test's messages
 *   with (for its XML); exported since 1.0, not declared in cmocka.h.
 *
 * Include it after <cmocka.h>; link with -lmemcheck and -lcmocka.
 */
#ifndef MEMCHECK_CMOCKA_H
#define MEMCHECK_CMOCKA_H

#include <stdio.h>
#include <stdlib.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

void cm_print_error(const char *format, ...);

/* The group that runs: the tests as given, and a copy that has the
 * wrappers in them. */
static struct {
	const struct CMUnitTest *orig;
	struct CMUnitTest *copy;
	size_t n;
	int open;                /* a test's region is open */
} mcglue_cm_group;

/* The test given for the copy cmocka runs, from the address of its
 * state (see above). */
static inline const struct CMUnitTest *mcglue_cm_test_of(void **state)
{
	const struct CMUnitTest *t = ((const struct CMUnitTest *const *)state)[-1];
	if (t < mcglue_cm_group.copy || t >= mcglue_cm_group.copy + mcglue_cm_group.n) {
		fprintf(stderr, "memcheck: this cmocka's per-test record is not laid out as "
			"memcheck/cmocka.h expects (cmocka 1.0 to 1.1.7)\n");
		abort();
	}
	return &mcglue_cm_group.orig[t - mcglue_cm_group.copy];
}

/* A test that left its region open (it failed or skipped): discarded. */
static inline void mcglue_cm_close(void)
{
	if (mcglue_cm_group.open) {
		mcglue_cm_group.open = 0;
		memcheck_discard();
	}
}

/* The test function, in a region of its own. */
static inline void mcglue_cm_test(void **state)
{
	const struct CMUnitTest *t = mcglue_cm_test_of(state);
	mcglue_cm_close();
	memcheck_begin(t->name);
	mcglue_cm_group.open = 1;
	t->test_func(state);
	mcglue_scrub();
	mcglue_cm_group.open = 0;
	/* cmocka reports the failure, and its status is the program's */
	struct mcglue_failure f = { __FILE__, __LINE__, "" };
	if (mcglue_end('"', &f) <= 0)
		return;
	cm_print_error("%s\n", f.why);
	_fail(f.file, f.line);
}

/* The test's own teardown, after a region its test left open is
 * discarded. */
static inline int mcglue_cm_teardown(void **state)
{
	const struct CMUnitTest *t = mcglue_cm_test_of(state);
	mcglue_cm_close();
	return t->teardown_func ? t->teardown_func(state) : 0;
}

/* cmocka's _cmocka_run_group_tests() with every test under memcheck. */
static inline int memcheck_cmocka_run(const char *name, const struct CMUnitTest *tests,
				      size_t n, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	struct CMUnitTest *copy = calloc(n ? n : 1, sizeof *copy);
	if (!copy)
		return _cmocka_run_group_tests(name, tests, n, setup, teardown);
	for (size_t i = 0; i < n; i++) {
		copy[i] = tests[i];
		if (tests[i].test_func) {
			copy[i].test_func = mcglue_cm_test;
			copy[i].teardown_func = mcglue_cm_teardown;
		}
	}
	mcglue_cm_group.orig = tests;
	mcglue_cm_group.copy = copy;
	mcglue_cm_group.n = n;
	int rc = _cmocka_run_group_tests(name, copy, n, setup, teardown);
	mcglue_cm_close();
	mcglue_cm_group.n = 0;
	free(copy);
	return rc;
}

#define memcheck_cmocka_run_group_tests(tests, setup, teardown)                     \
	memcheck_cmocka_run(#tests, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), \
			    (teardown))
#define memcheck_cmocka_run_group_tests_name(name, tests, setup, teardown)          \
	memcheck_cmocka_run((name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), \
			    (teardown))

#endif /* MEMCHECK_CMOCKA_H */
