/*
 * fw_check.c - a check suite under memcheck_tcase() (tests/test_frameworks.c):
 * one test clean, one that leaks a block copy_of() allocates, one that
 * leaks and then fails an assertion of its own, one whose leak
 * strdup() allocates (in a test case of its own, "libc", run apart:
 * whether a stale copy of its address makes it reachable depends on the
 * stack's layout).  The lines marked SITE are where the failures must
 * point.
 */
#include <memcheck/check.h>
#include <stdlib.h>
#include <string.h>

static char *copy_of(const char *s)
{
	char *p = malloc(strlen(s) + 1); /* SITE copy_of */
	strcpy(p, s);
	return p;
}

START_TEST(clean)
{
	free(copy_of("clean"));
}
END_TEST

START_TEST(leaks)
{
	char *p = copy_of("leaks");
	ck_assert_ptr_nonnull(p);
}
END_TEST

START_TEST(leaks_and_fails)
{
	char *p = copy_of("leaks and fails");
	ck_assert_msg(p == NULL, "the test's own failure");
}
END_TEST

START_TEST(strdup_leaks)
{
	char *p = strdup("strdup"); /* SITE strdup */
	ck_assert_ptr_nonnull(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw");
	TCase *tc = tcase_create("core");
	memcheck_tcase(tc);
	tcase_add_test(tc, clean);
	tcase_add_test(tc, leaks);
	tcase_add_test(tc, leaks_and_fails);
	suite_add_tcase(s, tc);
	TCase *libc = tcase_create("libc");
	memcheck_tcase(libc);
	tcase_add_test(libc, strdup_leaks);
	suite_add_tcase(s, libc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
