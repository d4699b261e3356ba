/* suite_criterion.c - a Criterion suite under memcheck: clean, leaks,
 * skipped. */
#include <stdlib.h>

#include <criterion/criterion.h>
#include <memcheck/criterion.h>

char *parse_name(const char *s);

Test(suite, clean)
{
	free(parse_name("clean"));
}

Test(suite, leaks)
{
	cr_assert_not_null(parse_name("leaks"));
}

Test(suite, skipped)
{
	cr_skip_test("skipped on purpose");
}
