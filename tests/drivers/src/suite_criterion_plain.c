/* suite_criterion_plain.c - a Criterion suite that knows nothing of
 * memcheck: clean, leaks (through the project's library).  Criterion's
 * runner runs each test in a worker whose status it does not look at,
 * so the leak fails the suite through memcheck's MEMCHECK_ANCESTORS. */
#include <stdlib.h>

#include <criterion/criterion.h>

char *parse_name(const char *s);

Test(plain, clean)
{
	free(parse_name("clean"));
}

Test(plain, leaks)
{
	cr_assert_not_null(parse_name("leaks"));
}
