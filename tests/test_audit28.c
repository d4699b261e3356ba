/*
 * test_audit28.c - what real suites found in session 28 (libpng under
 * automake, c-ares' gtest suite and libarchive's CTest suite).
 *
 * Every libarchive test process (its harness calls getpwnam and
 * getgrnam) had 10-16 blocks of the C library's still reachable, and a
 * resolver user 25, where valgrind shows none: glibc keeps its
 * name-service state (nsswitch.conf's parsed databases and modules,
 * resolv.conf, the result buffer of each non-reentrant lookup) for the
 * next lookup and frees it only in __libc_freeres, which valgrind calls
 * at exit.  The shipped glibc.supp takes it out (still reachable only);
 * the program's own kept block stays (tests/prog/plain_audit28_nss).
 */
#include <check.h>
#include <string.h>

#include "harness.h"

H_CHECK(looked_up)
{
	ck_assert_msg(strstr(x->r.out, "looked up 4 of 4 users and groups"), "%s: stdout \"%s\"",
		      x->label, x->r.out);
}

static const struct h_case cases[] = {
	{ "name-service lookups: glibc's kept state suppressed, the program's block not",
	  .run = { .prog = "plain_audit28_nss", .flags = H_PRELOAD | H_EXITCODE },
	  .record = "process",
	  .want = { { "still_reachable.blocks", 1 }, { "still_reachable.bytes", 24 },
		    { "definitely_lost.blocks", 0 }, { "possibly_lost.blocks", 0 } },
	  .check = looked_up },
};

int main(void)
{
	TCase *tc = h_tcase("audit28", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
