/* suite_cunit.c - a CUnit suite under memcheck: clean, leaks. */
#include <stdlib.h>

#include <CUnit/Basic.h>
#include <memcheck/cunit.h>

char *parse_name(const char *s);

static void clean(void)
{
	free(parse_name("clean"));
}

static void leaks(void)
{
	CU_ASSERT_PTR_NOT_NULL(parse_name("a name this test never frees"));
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	CU_pSuite s = memcheck_cunit_add_suite("name", NULL, NULL);
	CU_add_test(s, "clean", clean);
	CU_add_test(s, "leaks", leaks);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
