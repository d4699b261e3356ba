/*
 * check_tcase.c - a check suite linked with memcheck, every test under
 * memcheck_tcase(): each test's forked child ends the test's region, so
 * its process region is folded into it and reported only when the child
 * leaks outside it (tests/test_checkfork.c).  A fixture of the suite's
 * own, added before memcheck's, leaks 33 bytes in the tests of one TCase:
 * outside their regions.  One test leaks 41 bytes inside its region.
 */
#include <stdlib.h>

#include <memcheck/check.h>

static void *volatile sink;

START_TEST(clean_a)
{
	free(malloc(10));
}
END_TEST

START_TEST(clean_b)
{
	free(malloc(20));
}
END_TEST

START_TEST(leaks_41)
{
	sink = malloc(41);
	sink = NULL;
}
END_TEST

START_TEST(fixture_leaks)
{
	free(malloc(30));
}
END_TEST

/* Runs in the test's child before memcheck's setup: not the region's. */
static void leaky_setup(void)
{
	sink = malloc(33);
	sink = NULL;
}

static void nothing(void)
{
}

int main(void)
{
	Suite *s = suite_create("tcase");
	TCase *tc = tcase_create("plain");
	memcheck_tcase(tc);
	tcase_add_test(tc, clean_a);
	tcase_add_test(tc, clean_b);
	tcase_add_test(tc, leaks_41);
	suite_add_tcase(s, tc);
	TCase *fx = tcase_create("fixture");
	tcase_add_checked_fixture(fx, leaky_setup, nothing);
	memcheck_tcase(fx);
	tcase_add_test(fx, fixture_leaks);
	suite_add_tcase(s, fx);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_SILENT);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
