/*
 * test_ignore.c - memcheck_ignore() and memcheck_disable()/enable(): a
 * block let outlive its regions is not left behind in them, its free
 * still counts, and only live blocks memcheck tracks can be ignored; and
 * regions past the block table's 16-bit epochs (tests/prog/ignore.c,
 * which checks its own figures and names a wrong one on stderr).
 *
 * One row: the program is linked with memcheck and uses the C library's
 * allocator.  It makes 70,000 regions, hence the minute.
 */
#include <check.h>

#include "harness.h"

static const struct h_case cases[] = {
	/* MEMCHECK_SCAN=0: every block left behind counts as definitely
	 * lost, which is what these cases check (the program still holds
	 * them, so the scan would call them still reachable);
	 * test_leakkinds tests the kinds. */
	{ "ignored block outlives regions", .allocators = H_ONLY(H_GLIBC),
	  /* 70,000 API regions, each measured for the result the program
	   * reads (RSS, ~11 system calls): 11-16 s alone here, past the
	   * default 20 s at a load of 9-14 */
	  .run = { .prog = "ignore", .env = H_LIST("MEMCHECK_SCAN=0"), .no_report = true,
		   .timeout = 100 } },
};

int main(void)
{
	TCase *tc = h_tcase("ignore", 120); /* 70,000 regions */
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
