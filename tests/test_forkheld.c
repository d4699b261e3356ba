/*
 * test_forkheld.c - memcheck's own locks across fork: a lock another
 * thread holds at the fork must be taken by memcheck's prepare handler
 * or reset in the child, or the child, which has only the forking
 * thread, waits for it for ever (tests/prog/plain_forkheld: the child
 * that hangs is killed after 5 s and the row fails).  test_fork's
 * forklocks covers the locks a fork handler already took; each row here
 * is one that it did not.
 */
#include <check.h>
#include <string.h>

#include "harness.h"

/* Where the allocator serves 2^37 bytes the row tested what it says: an
 * allocator that stops doing so must not turn it into one that cannot
 * fail unseen. */
H_CHECK(oversized_served)
{
	bool serves = x->alloc == H_MIMALLOC || x->alloc == H_JEMALLOC;
	ck_assert_msg(!serves || strstr(x->r.out, "oversized=yes"),
		      "%s: the allocator no longer serves 2^37 bytes: stdout \"%s\"", x->label,
		      x->r.out);
}

/* No report: the measured figures' allocator statistics read what is
 * resident of every anonymous mapping with mincore (allocator.c's
 * unclaimed_resident), 16 MiB a call: 6 TiB of oversized blocks made each
 * child's exit take seconds under jemalloc.
 *
 * blocks.c's odd_lock (the side table of blocks an entry cannot hold)
 * was neither taken by the prepare handler nor reset in the child: on
 * main, 200 forks hung a child under mimalloc (~3% of forks) and
 * jemalloc (~13%); glibc and tcmalloc refuse 2^37 bytes here (the
 * kernel's overcommit heuristic), so their side table stays empty. */
static const struct h_case cases[] = {
	{ "side table's lock held by a thread at the fork",
	  .run = { .prog = "plain_forkheld", .args = H_LIST("odd", "200"), .flags = H_PRELOAD,
		   .text = "fail", .no_report = true },
	  .out = H_LIST("forks=200 hung=0"), .check = oversized_served },
	/* limits.c's update_lock, a mutex no fork handler took: held by a
	 * thread setting RLIMIT_AS at the fork, the child's own setrlimit
	 * waited for it for ever (on main the first or second child hung,
	 * under each allocator).  Count-only: the limits are followed
	 * there. */
	{ "limits.c's lock held by a thread at the fork",
	  .run = { .prog = "plain_forkheld", .args = H_LIST("limits", "200"), .flags = H_PRELOAD,
		   .text = "fail", .no_report = true, .env = H_LIST("MEMCHECK_TRACK=0") },
	  .out = H_LIST("forks=200 hung=0") },
	/* sandbox.c's lock, a mutex no fork handler took, held while a
	 * process that sets no_new_privs has memcheck open and keep what
	 * its exit needs (the /proc files, the report, the suppressions):
	 * a child forked meanwhile hung in its own prctl (on main the
	 * first round hung, 16 children forked while a thread set it). */
	{ "sandbox.c's lock held by a thread at the fork",
	  .run = { .prog = "plain_forkheld", .args = H_LIST("sandbox", "20"), .flags = H_PRELOAD,
		   .text = "fail" },
	  .out = H_LIST("rounds=20 hung=0") },
	/* A fork from a signal handler that interrupted memcheck's own work
	 * in the forking thread: the prepare handler waited for that
	 * thread's own busy marks and locks (on main: hung within the
	 * first forks).  mimalloc alone: glibc's, jemalloc's and tcmalloc's
	 * fork handlers wait for the malloc lock such a handler interrupted,
	 * bare too (this program hangs bare under them); bare mimalloc forks
	 * there, and so must it under memcheck. */
	{ "fork from a signal handler that interrupted memcheck",
	  .allocators = H_ONLY(H_MIMALLOC),
	  .run = { .prog = "plain_forkheld", .args = H_LIST("handler", "200"), .flags = H_PRELOAD,
		   .text = "fail", .no_report = true },
	  .out = H_LIST("handler forks=200 failed=0") },
};

int main(void)
{
	TCase *tc = h_tcase("forkheld", 120);
	H_ADD_CASES(tc, cases);
	return h_run_suite(NULL);
}
