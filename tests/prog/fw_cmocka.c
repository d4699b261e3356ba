/*
 * fw_cmocka.c - a cmocka group under memcheck_cmocka_run_group_tests()
 * (tests/test_frameworks.c): one test clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails an assertion of its
 * own, one that leaks and skips itself, and a clean one whose setup
 * allocates what its teardown frees.  The line marked SITE is where the
 * leak's failure must point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <memcheck/cmocka.h>

static char *copy_of(const char *s)
{
	char *p = malloc(strlen(s) + 1); /* SITE copy_of */
	strcpy(p, s);
	return p;
}

static void clean(void **state)
{
	(void)state;
	free(copy_of("clean"));
}

static void leaks(void **state)
{
	(void)state;
	assert_non_null(copy_of("a block this test never frees"));
}

static void leaks_and_fails(void **state)
{
	(void)state;
	char *p = copy_of("leaks and fails");
	assert_null(p);
}

static void leaks_and_skips(void **state)
{
	(void)state;
	assert_non_null(copy_of("skips"));
	skip();
}

static int setup(void **state)
{
	*state = malloc(64);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean),
		cmocka_unit_test(leaks),
		cmocka_unit_test(leaks_and_fails),
		cmocka_unit_test(leaks_and_skips),
		cmocka_unit_test_setup_teardown(clean, setup, teardown),
	};
	return memcheck_cmocka_run_group_tests(tests, NULL, NULL);
}
