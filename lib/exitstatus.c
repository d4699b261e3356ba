/*
 * exitstatus.c - a failing region fails the process.  When a region
 * failed (a leak, a heap error, a budget) and the program would exit
 * with status 0, it exits with MEMCHECK_EXITCODE instead (23 by default,
 * as under LeakSanitizer), so that a test driver that looks only at exit
 * statuses (ctest, meson, automake, check's forked tests) counts the
 * test as failed.  Any other status is the program's to keep: 77 (a
 * skipped test) and 99 (a hard error) mean something to those drivers.
 *
 * Traps that shaped it:
 * - Only exit() knows the status.  The library's destructor, which the
 *   dynamic linker's _dl_fini runs from an exit handler, gets none.  An
 *   on_exit(3) handler gets it; registered from memcheck's constructor,
 *   which runs before the program's entry point registers _dl_fini, it
 *   runs after _dl_fini, and ends the process region there (life.c).
 * - A destructor of the program's that calls exit() makes glibc run the
 *   remaining handlers with the new status and never go back to
 *   _dl_fini: memcheck's destructor never runs.  The handler then finds
 *   the process region still open and ends it itself (whatever
 *   MEMCHECK_EXITCODE says: the handler is there for the report too).
 *   It does the same when it runs first (libmemcheck.a linked into the
 *   program, whose constructor runs after _dl_fini is registered; a
 *   dlopen'd copy).
 * - The status is changed by calling exit() again from the handler,
 *   which glibc allows (it runs the handlers left, flushes stdio, then
 *   _exits with the last status): the program's buffered output is
 *   written as it would have been.
 * - _exit, _Exit, quick_exit, a fatal signal and execve run no handler.
 *   A fatal signal's record is fatal.c's, and leaves the status alone:
 *   the process dies of its signal whatever its regions say.  Its failed
 *   regions still reach its measured ancestors, as a leaking process's
 *   do (mc_exit_killed): a parent that ignores how its child ended would
 *   otherwise pass a crashed child's leak.  The signal itself is not a
 *   failure passed on: a parent that kills its helper with SIGTERM, or a
 *   death test whose child is meant to abort, passes bare; nor is a
 *   record's failure that only the signal's deadline made (its scan
 *   given up: MEMCHECK_FATAL_SCAN_MS), which the record itself shows.
 *   life.c's wrapper of _exit and _Exit reports the process there (and
 *   of quick_exit: after the program's at_quick_exit handlers) and
 *   exits with mc_exit_status's status (a destructor's after memcheck's
 *   deferred the report, and a process's own: libsodium's tests from a
 *   SIGABRT handler), except in a forked child (check's forked test that
 *   fails an assertion leaves with _exit(1)) and in a handler that
 *   interrupted memcheck; the rest keep the program's status.
 * - Under valgrind's text (MEMCHECK_VALGRIND_TEXT, memcheck's valgrind
 *   command line) valgrind's rule instead: a failing process exits
 *   with MEMCHECK_EXITCODE (--error-exitcode=N) whatever its own status
 *   (valgrind 3.19: a program that leaks and exits 3 under
 *   --leak-check=full --error-exitcode=42 gives 42), and says nothing of
 *   it: valgrind does not, and its ERROR SUMMARY has said why.
 * - A forked child counts only the regions that fail in it.
 * - A parent may ignore a child's status (Criterion's runner, a program
 *   that forks a worker): a failing process leaves a record for its
 *   measured ancestors, and one about to exit 0 fails on finding one
 *   (descend.c).
 * - One rule for the preload, memcheck run and the drivers (session 48):
 *   a failure reaches a test through the exit status the driver reads,
 *   and memcheck never changes what a status the program chose says.  A
 *   process that exits non-zero on its own has already told whatever
 *   runs it that it failed; a test may expect exactly that (CTest's
 *   WILL_FAIL, meson's should_fail, automake's XFAIL_TESTS, a script
 *   that checks that a tool rejects bad input: wayland's scanner test),
 *   and such an exit from deep in a program rarely frees what it holds.
 *   So its failed regions stay in its record (verdict fail, and the
 *   record's "exit_status", descend.c's mc_exit_own) and its text, but go no
 *   further: its measured ancestors are not failed, and memcheck run
 *   does not count them (tools/records.c).  Valgrind replaces any
 *   status with --error-exitcode's (a program that leaks and exits 3
 *   under --error-exitcode=99 gives 99): non-zero either way, so a
 *   driver's verdict is the same; the exact status is the program's
 *   here, and valgrind's under its text.  A killed process did not
 *   choose its end: its failed regions still reach its ancestors.
 */
#include <stdatomic.h>

#include "internal.h"

static _Atomic unsigned failed;      /* regions failed, not handled */
/* regions failed only because a killed process's scan was given up at
 * its deadline (region.c): the record's failure, not the ancestors' */
static _Atomic unsigned incomplete;
static _Atomic bool last_failed;     /* the region ended last failed */
static _Atomic unsigned dropped;     /* report records dropped (textout.c's bound) */

/* A record of the JSON report that its reader did not take in time was
 * dropped (a pipe or FIFO nobody reads: textout.c), or that its file
 * could not take (a full disk: mc_append_dropped), so a driver that
 * reads the report would find this process clean or missing: about to
 * exit 0, it fails, as a failed region does (not under valgrind's text,
 * whose status is valgrind's rule).  Said in the text, which the same
 * stalled reader may not take.  Rare: its code apart (text-order.ld's
 * group 7). */
static __attribute__((noinline)) int dropped_status(unsigned d)
{
	if (mc_opt.text != MC_TEXT_NONE)
		mc_log("exit status %d instead of 0: %u record%s of MEMCHECK_REPORT dropped, its "
		       "reader stalled or its file full (MEMCHECK_EXITCODE=0 keeps the program's "
		       "own)",
		       mc_opt.exitcode, d, d == 1 ? "" : "s");
	return mc_opt.exitcode;
}

MC_API int memcheck_descendants_failed(long *pid, char *program, size_t size)
{
	unsigned long long p = 0, regions = 0;
	mc_fds_room_begin(); /* descend.c's file: room above the program's limit */
	unsigned n = mc_descend_take(&p, &regions, program, program ? size : 0);
	mc_fds_room_end();
	if (pid)
		*pid = (long)p;
	return (int)n;
}

unsigned mc_exit_failed_regions(void)
{
	return atomic_load(&failed) + atomic_load(&incomplete);
}

void mc_exit_record_dropped(void)
{
	atomic_fetch_add(&dropped, 1);
}

/* After the process region has ended: the status the process exits
 * with, the program's or, when a region failed, MEMCHECK_EXITCODE
 * (said). */
int mc_exit_status(int status)
{
	unsigned n = atomic_load(&failed);
	/* A failure of this process's is its measured ancestors' too
	 * (descend.c): a parent may ignore this status; not when this
	 * process exits non-zero on its own, which its parent has been
	 * told (the head's rule: mc_descend_fail reads mc_exit_own).
	 * Else, about to exit 0: a descendant's failure is this
	 * process's. */
	mc_fds_room_begin(); /* descend.c's files: room above the program's limit */
	if (n)
		mc_descend_fail(n);
	mc_fds_room_end();
	if (mc_opt.exitcode == 0)
		return status;
	/* read (and removed) whatever the status: a check runner exits 1
	 * after its forked test failed, whose record would stay behind */
	bool own = (status & 0xff) != 0;
	mc_fds_room_begin();
	bool below = mc_descend_failed(!own && n == 0);
	mc_fds_room_end();
	/* valgrind's rule under its text: --error-exitcode=N gives N for
	 * errors whatever the program's status */
	bool vg = mc_opt.valgrind_text != MC_VGTEXT_NONE;
	if (own && !(vg && n))
		return status;
	unsigned d = atomic_load_explicit(&dropped, memory_order_relaxed);
	if (unlikely(d != 0) && n == 0 && !below && !vg)
		return dropped_status(d);
	if (n == 0)
		return below ? mc_opt.exitcode : status;
	if (mc_opt.text != MC_TEXT_NONE && !vg)
		mc_log("exit status %d instead of 0: %u region%s failed "
		       "(MEMCHECK_EXITCODE=0 keeps the program's own)",
		       mc_opt.exitcode, n, n == 1 ? "" : "s");
	return mc_opt.exitcode;
}

/* A fatal signal's record was written (life.c): its failed regions
 * reach the measured ancestors, and a descendant's record left for this
 * process is removed (no one would read it), the status untouched. */
void mc_exit_killed(void)
{
	unsigned n = atomic_load(&failed);
	mc_fds_room_begin();
	if (n)
		mc_descend_fail(n);
	if (mc_opt.exitcode != 0)
		(void)mc_descend_failed(false);
	mc_fds_room_end();
}

void mc_exit_region_ended(bool pass)
{
	if (!pass)
		atomic_fetch_add(&failed, 1);
	atomic_store(&last_failed, !pass);
}

/* A region whose only failure is its scan given up at a killed
 * process's deadline (region.c): the record's failure and the text's,
 * not the ancestors' (mc_exit_killed reads failed alone).  Rare: cold. */
void mc_exit_region_incomplete(void)
{
	atomic_fetch_add(&incomplete, 1);
	atomic_store(&last_failed, true);
}

void mc_exit_after_fork_child(void)
{
	atomic_store(&failed, 0);
	atomic_store(&last_failed, false);
	atomic_store(&dropped, 0);
}

/* memcheck_handled() (region.c): the region that ended last failed, and
 * no longer counts. */
bool mc_exit_handled(void)
{
	if (!atomic_exchange(&last_failed, false))
		return false;
	atomic_fetch_sub(&failed, 1);
	return true;
}
