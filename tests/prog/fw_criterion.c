/*
 * fw_criterion.c - a Criterion suite under memcheck/criterion.h
 * (tests/test_frameworks.c): one test clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails an assertion of its
 * own, one that leaks and skips itself, a clean one whose .init
 * allocates what its .fini frees, and a parameterized one that leaks for
 * one parameter.  The line marked SITE is where the leaks' failures must
 * point.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <memcheck/criterion.h>

static char *copy_of(const char *s)
{
	char *p = malloc(strlen(s) + 1); /* SITE copy_of */
	strcpy(p, s);
	return p;
}

static void *fixture;

static void init(void)
{
	fixture = malloc(64);
}

static void fini(void)
{
	free(fixture);
}

Test(fw, clean)
{
	free(copy_of("clean"));
}

Test(fw, leaks)
{
	cr_assert_not_null(copy_of("leaks"));
}

Test(fw, leaks_and_fails)
{
	char *p = copy_of("leaks and fails");
	cr_assert_null(p);
}

Test(fw, leaks_and_skips)
{
	cr_assert_not_null(copy_of("skips"));
	cr_skip_test("skipped on purpose");
}

Test(fw, with_fixture, .init = init, .fini = fini)
{
	free(copy_of("fixture"));
}

ParameterizedTestParameters(fw, param)
{
	static int params[] = { 0, 1 };
	return cr_make_param_array(int, params, 2);
}

ParameterizedTest(int *leak, fw, param)
{
	char *p = copy_of("param");
	if (!*leak)
		free(p);
}
