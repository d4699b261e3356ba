/*
 * check_kvparse.c - the suite `make oom-demo` sweeps with memcheck oom.
 *
 * Each test runs the parser inside a region of its own and asserts only
 * after the region ends, so the sweep fails the parser's allocations, not
 * check's.  memcheck_expect_oom() says the test may fail when an
 * allocation fails: the sweep then counts that failure as handled, and
 * looks only for leaks and crashes.  Every test passes as it is.
 */
#include <stdlib.h>
#include <string.h>

#include <memcheck/check.h>

#include "kvparse.h"

START_TEST(parses_pairs)
{
	memcheck_begin("parses_pairs");
	memcheck_expect_oom();
	struct kv_list *l = kv_parse("name=memcheck\nlang=C\nversion=0.1\n");
	size_t n = kv_count(l);
	const char *lang = kv_get(l, "lang");
	int lang_is_c = lang && strcmp(lang, "C") == 0;
	kv_free(l);
	int clean = memcheck_end(NULL);
	ck_assert_int_eq(clean, 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(lang_is_c);
}
END_TEST

START_TEST(skips_lines_without_equals)
{
	memcheck_begin("skips_lines_without_equals");
	memcheck_expect_oom();
	struct kv_list *l = kv_parse("# a comment\nkey=value\n\n");
	size_t n = kv_count(l);
	kv_free(l);
	int clean = memcheck_end(NULL);
	ck_assert_int_eq(clean, 0);
	ck_assert_uint_eq(n, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvparse");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, parses_pairs);
	tcase_add_test(tc, skips_lines_without_equals);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
