/* plain_check_fork.c - an unmodified check suite in CK_FORK mode (check's default):
 * each test runs in a forked child that exits when the test is done.  It
 * knows nothing of memcheck; test_checkfork preloads it.  One test leaks
 * 77 bytes, one keeps a block in a global, the rest are clean. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

static void *volatile kept; /* still reachable at the child's exit */

START_TEST(clean)
{
	char *p = malloc(100);
	ck_assert_ptr_nonnull(p);
	strcpy(p, "clean");
	ck_assert_str_eq(p, "clean");
	free(p);
}
END_TEST

START_TEST(leaks_77)
{
	void *volatile p = malloc(77);
	ck_assert_ptr_nonnull(p);
	p = NULL;
}
END_TEST

START_TEST(keeps_64)
{
	kept = malloc(64);
	ck_assert_ptr_nonnull(kept);
	mark_point();
}
END_TEST

START_TEST(asserts_a_lot)
{
	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(i, i);
		mark_point();
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("check_fork");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, clean);
	tcase_add_test(tc, leaks_77);
	tcase_add_test(tc, keeps_64);
	tcase_add_test(tc, asserts_a_lot);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
