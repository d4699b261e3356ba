/*
 * memcheck/cunit.h - glue for CUnit.
 *
 * One line puts every test of a suite under memcheck: create the suite
 * with
 *
 *     CU_pSuite s = memcheck_cunit_add_suite("core", NULL, NULL);
 *
 * instead of CU_add_suite().  Each test then runs in a region of its
 * own, named after the test, and a test that leaves memory behind fails
 * with CUnit's own failure, at the line that allocated the block, in
 * its console, basic and automated (XML) output alike.  A suite with a
 * setup and a teardown of its own calls memcheck_cunit_setup() last in
 * its setup and memcheck_cunit_teardown() first in its teardown.
 *
 * Traps that shaped it:
 * - Preloaded alone, a leaking test is counted passed: CUnit runs every
 *   test in one process, and the process region fails the run at its
 *   exit (status 23), naming no test.
 * - CUnit runs a suite's per-test teardown after the test and before it
 *   counts the test's failures, and charges an assertion made there to
 *   the test (CU_assertImplementation, as CU_ASSERT does): the region
 *   ends in the teardown.
 * - A test that failed an assertion of its own (a fatal one leaves the
 *   test by longjmp, before its frees) keeps that failure: its region
 *   is discarded unreported.
 *
 * Link with -lmemcheck and -lcunit.
 */
#ifndef MEMCHECK_CUNIT_H
#define MEMCHECK_CUNIT_H

#include <CUnit/CUnit.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* CUnit's failures when the running test's region began. */
static unsigned mcglue_cu_failures;

/* A test's region begins: named after the test CUnit runs. */
static inline void memcheck_cunit_setup(void)
{
	CU_pTest t = CU_get_current_test();
	mcglue_cu_failures = CU_get_number_of_failures();
	memcheck_begin(t && t->pName ? t->pName : "test");
}

/* The test's region ends: a leak is the test's failure, at its line.
 * Called from memcheck_cunit_teardown after the scrub: its frame is
 * written before the scan, where the teardown's lies over the test's
 * dead frames unscrubbed. */
__attribute__((noinline)) static void mcglue_cu_end(void)
{
	if (CU_get_number_of_failures() != mcglue_cu_failures) {
		memcheck_discard(); /* the test's own failure stands */
		return;
	}
	/* CUnit reports the failure, and its status is the program's */
	struct mcglue_failure f = { __FILE__, __LINE__, "" };
	if (mcglue_end('"', &f) > 0)
		CU_assertImplementation(CU_FALSE, (unsigned)f.line, f.why, f.file, "", CU_FALSE);
}

/* The test's region ends: a leak is the test's failure, at its line.
 * CUnit calls it where it called the test: nothing here but the scrub
 * of the test's dead frames and the call that ends the region. */
static inline void memcheck_cunit_teardown(void)
{
	mcglue_scrub();
	mcglue_cu_end();
}

/* CU_add_suite() with every test of the suite under memcheck. */
static inline CU_pSuite memcheck_cunit_add_suite(const char *name, CU_InitializeFunc init,
						 CU_CleanupFunc clean)
{
	return CU_add_suite_with_setup_and_teardown(name, init, clean, memcheck_cunit_setup,
						    memcheck_cunit_teardown);
}

#endif
