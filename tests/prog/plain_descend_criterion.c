/*
 * plain_descend_criterion.c - a Criterion suite, not linked with
 * memcheck, with one test that leaks: Criterion's runner ignores the
 * status of the worker that ran it (tests/test_descend.c).
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

Test(descend, passes)
{
	cr_assert(1);
}

Test(descend, leaks)
{
	char *p = malloc(40);
	strcpy(p, "x");
	cr_assert(p[0] == 'x');
}
