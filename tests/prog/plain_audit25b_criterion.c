/*
 * plain_audit25b_criterion.c - a Criterion suite, not linked with
 * memcheck, whose workers end from inside their tests: a skip with a
 * message, one without, and an exit(); one test ends normally.  Each
 * worker is a process of its own under the preload.
 */
#include <stdlib.h>

#include <criterion/criterion.h>

Test(ends, normally)
{
	cr_assert(1);
}

Test(ends, skipping_with_a_message)
{
	cr_skip_test("skipped on %s", "purpose");
}

Test(ends, skipping)
{
	cr_skip_test();
}

Test(ends, by_exit, .exit_code = 0)
{
	exit(0);
}
