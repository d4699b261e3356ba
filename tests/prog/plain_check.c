/*
 * plain_check.c - a check suite in CK_FORK mode that frees everything it
 * allocates, not linked to memcheck, for tests/test_vgsupp.c: each test
 * runs in a forked child that exits with check's own bookkeeping (the
 * suite, the runner, earlier results, its message file) still allocated,
 * which suppressions/check.supp accounts for.  Fixtures of both kinds,
 * and one test that fails on purpose (in a test case without fixtures:
 * a failing test skips the teardown), so that the child after it holds
 * a failure message too.  Exit status 0 when exactly that test failed.
 *
 * usage: plain_check [leak]   (leak: the first test keeps a block in a
 *        global, still reachable, and loses a strdup'd string: leaks of
 *        the program's own that no suppression may hide)
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

static char *fixture;
static int leak;
static void *volatile kept;

static void setup(void)
{
	fixture = malloc(32);
	strcpy(fixture, "fixture");
}

static void teardown(void)
{
	free(fixture);
	fixture = NULL;
}

/* Runs in the runner, around the test case: keeps nothing. */
static void runner_fixture(void)
{
	free(malloc(16));
}

START_TEST(frees_what_it_allocates)
{
	char *p = malloc(100);
	ck_assert_ptr_nonnull(p);
	free(p);
	ck_assert_str_eq(fixture, "fixture");
	if (leak) {
		kept = malloc(48);
		char *lost = strdup("lost");
		ck_assert_ptr_nonnull(lost);
	}
}
END_TEST

START_TEST(fails_on_purpose)
{
	ck_assert_msg(0, "this test fails on purpose");
}
END_TEST

START_TEST(runs_after_a_failure)
{
	void *p = calloc(4, 8);
	p = realloc(p, 64);
	free(p);
}
END_TEST

int main(int argc, char **argv)
{
	leak = argc > 1 && strcmp(argv[1], "leak") == 0;
	Suite *s = suite_create("plain_check");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(tc, runner_fixture, runner_fixture);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, frees_what_it_allocates);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("failing");
	tcase_set_timeout(tf, 60);
	tcase_add_test(tf, fails_on_purpose);
	tcase_add_test(tf, runs_after_a_failure);
	suite_add_tcase(s, tf);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 1 ? 0 : 1;
}
