/* suite_cmocka.c - a cmocka group under memcheck: clean, leaks, skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <memcheck/cmocka.h>

char *parse_name(const char *s);

static void clean(void **state)
{
	(void)state;
	free(parse_name("clean"));
}

static void leaks(void **state)
{
	(void)state;
	assert_non_null(parse_name("a name this test never frees"));
}

static void skipped(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean),
		cmocka_unit_test(leaks),
		cmocka_unit_test(skipped),
	};
	return memcheck_cmocka_run_group_tests(tests, NULL, NULL);
}
