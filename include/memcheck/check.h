/*
 * memcheck/check.h - glue for the check unit-test framework.
 *
 * One line puts every test of a TCase under memcheck:
 *
 *     TCase *tc = tcase_create("parser");
 *     memcheck_tcase(tc);
 *
 * Each test then runs in its own region, named after the test, and fails
 * with check's own message when it leaves memory behind or breaks a
 * budget.  The fixtures are checked fixtures, so they run in the test's
 * process: in CK_FORK mode (check's default) the region starts in the
 * forked child and its figures are the test's own.  In CK_NOFORK mode
 * check reopens its message file (a FILE and its 4 KiB buffer) after
 * the setup fixture and closes it after the teardown, so those two
 * blocks are reported as the test's until suppressions can name them.
 *
 * Or, inside one test:
 *
 *     memcheck_begin("parse big file");
 *     ...
 *     ck_assert_memcheck_end();
 *
 * Include <check.h> is done here; link with -lmemcheck and check's libs.
 */
#ifndef MEMCHECK_CHECK_H
#define MEMCHECK_CHECK_H

#include <check.h>

#include "memcheck/memcheck.h"

/* End the innermost region and fail the running test, with check's
 * message saying why, when the region is not clean or within budget. */
#define ck_assert_memcheck_end()                                             \
	do {                                                                 \
		struct memcheck_result mc_r_;                                \
		int mc_rc_ = memcheck_end(&mc_r_);                           \
		ck_assert_msg(mc_rc_ == 0, "memcheck: region \"%s\": %s",    \
			      mc_rc_ < 0 ? "?" : mc_r_.name,                 \
			      mc_rc_ < 0 ? "no region open" : mc_r_.violations); \
	} while (0)

/* Checked-fixture setup: opens the test's region.  The test's name is
 * not known yet here (tcase_name() still answers for the previous one);
 * the teardown names the region. */
static inline void memcheck_ck_setup(void)
{
	memcheck_begin("test");
}

/* Checked-fixture teardown: names the region after the test, ends it,
 * and fails the test when the region is not clean. */
static inline void memcheck_ck_teardown(void)
{
	const char *name = tcase_name();
	if (name)
		memcheck_rename(name);
	ck_assert_memcheck_end();
}

/* Put every test of tc under memcheck. */
static inline void memcheck_tcase(TCase *tc)
{
	tcase_add_checked_fixture(tc, memcheck_ck_setup, memcheck_ck_teardown);
}

#endif /* MEMCHECK_CHECK_H */
