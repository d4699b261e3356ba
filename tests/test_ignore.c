/*
 * test_ignore.c - memcheck_ignore() and memcheck_disable()/enable(): a
 * block let outlive its regions is not left behind in them, its free
 * still counts, and only live blocks memcheck tracks can be ignored; and
 * regions past the block table's 16-bit epochs (tests/prog/ignore.c).
 */
#include <check.h>

#include "harness.h"

START_TEST(ignored_block_outlives_regions)
{
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely lost,
	 * which is what these cases check (the program still holds them, so
	 * the scan would call them still reachable); test_leakkinds tests the
	 * kinds. */
	const char *env[] = { "MEMCHECK_TEXT=none", "MEMCHECK_SCAN=0", NULL };
	struct h_run r;
	H_RUN(&r, 0, NULL, env, h_prog("ignore"));
	ck_assert_msg(r.exit_code == 0, "ignore: %s; wrong figures:\n%s%s", h_status(&r),
		      r.out, r.err);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("ignore", 0);
	tcase_set_timeout(tc, 60); /* 70,000 regions */
	tcase_add_test(tc, ignored_block_outlives_regions);
	return h_run_suite(NULL);
}
