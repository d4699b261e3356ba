/*
 * fw_cunit.c - a CUnit suite under memcheck_cunit_add_suite()
 * (tests/test_frameworks.c): one test clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails a fatal assertion
 * of its own; and a suite with a setup and teardown of its own that
 * call memcheck's, one test clean there and one leaking.  copy_of() is
 * fw_site.h's, whose line marked SITE is where the leak's failure must
 * point.  FW_CUNIT_CLEAN=1
 * registers the clean tests only.  Exits 1 when a test failed.
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <memcheck/cunit.h>

#include "../fw_site.h"

static void clean(void)
{
	free(copy_of("clean"));
}

static void leaks(void)
{
	CU_ASSERT_PTR_NOT_NULL(copy_of("a block this test never frees"));
}

static void leaks_and_fails(void)
{
	char *p = copy_of("leaks and fails");
	CU_ASSERT_PTR_NULL_FATAL(p);
	free(p);
}

static char *fixture;

static void setup(void)
{
	fixture = malloc(64);
	memcheck_cunit_setup();
}

static void teardown(void)
{
	memcheck_cunit_teardown();
	free(fixture);
}

static void with_fixture(void)
{
	strcpy(fixture, "fixture");
	free(copy_of(fixture));
}

static void fixture_leaks(void)
{
	strcpy(fixture, "fixture");
	CU_ASSERT_PTR_NOT_NULL(copy_of(fixture));
}

int main(void)
{
	int all = !getenv("FW_CUNIT_CLEAN");
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	CU_pSuite core = memcheck_cunit_add_suite("core", NULL, NULL);
	CU_add_test(core, "clean", clean);
	if (all) {
		CU_add_test(core, "leaks", leaks);
		CU_add_test(core, "leaks_and_fails", leaks_and_fails);
	}
	CU_pSuite fx = CU_add_suite_with_setup_and_teardown("fixture", NULL, NULL, setup, teardown);
	CU_add_test(fx, "with_fixture", with_fixture);
	if (all)
		CU_add_test(fx, "fixture_leaks", fixture_leaks);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
