/*
 * memcheck/gtest.h - glue for GoogleTest.
 *
 * One line, in one source file of the test program (a program linked
 * with gtest_main too), puts every test under memcheck:
 *
 *     #include <memcheck/gtest.h>
 *
 * Each test (its fixture's constructor, SetUp, body, TearDown and
 * destructor) then runs in a region of its own, named Suite.Test, and a
 * test that leaves memory behind fails with GoogleTest's own failure, at
 * the line that allocated the block, in its console and XML or JSON
 * output alike.
 *
 * Traps that shaped it:
 * - GoogleTest runs no code of the program's between a test's end and
 *   its verdict but its event listeners'.  Ours is appended to the list
 *   by a static object's constructor, before main, after the console
 *   printer that GoogleTest installs first; listeners hear of a test's
 *   end in the reverse order of the list, so ours ends the region and
 *   adds its failure while the test is still the current one, before
 *   the printer and the XML writer read the test's result.
 * - A test that failed or skipped on its own keeps that result: its
 *   region is discarded unreported (a fatal assertion leaves the body
 *   before its frees).
 * - A death test's child, forked ("fast" style) or started again from
 *   the program's file ("threadsafe" style, --gtest_internal_run_death_test
 *   on its command line), dies inside the test on purpose: the child
 *   opens no region, or discards the one it inherited at the fork, and
 *   its process region judges it as any forked child's.  A child that
 *   failed (it leaked before it died) leaves a record for this process
 *   (MEMCHECK_ANCESTORS); its text went to the stderr GoogleTest
 *   captured and shows only when the death test fails, and this
 *   process would exit 23 after GoogleTest printed PASSED.  So each
 *   test's end takes those records (memcheck_descendants_failed) and
 *   fails the test that started the child, naming it.  Preloaded too
 *   (memcheck run, a driver's wrapper), the child's process region
 *   judges it; linked only, it has none, and its leak went unseen: so a
 *   child forked inside a test, or started again for one, opens a
 *   region of the test's name that ends with it (memcheck_begin_process:
 *   at its exit, _exit or fatal signal), unless a process region is
 *   there to judge it.
 * - The listener allocates nothing of its own while a test's region is
 *   open: the region's name goes into a static buffer.
 *
 * Link with -lmemcheck and -lgtest (or -lgtest_main), and -pthread.
 */
#ifndef MEMCHECK_GTEST_H
#define MEMCHECK_GTEST_H

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

namespace memcheck_gtest {

/* Whether a test's region is open in this process. */
inline int &region_open()
{
	static int open;
	return open;
}

/* The running test's name, Suite.Test (static: nothing allocated while
 * a region is open). */
inline char *test_name()
{
	static char name[512];
	return name;
}

/* A region the process does not end itself (a death test's child, which
 * dies inside the test): discarded. */
inline void close_unended()
{
	if (region_open()) {
		region_open() = 0;
		memcheck_discard();
	}
}

/* A process that ends inside the test (a death test's child, forked or
 * started again): a region of the test's name that ends with it, where
 * no process region judges it. */
inline void child_region()
{
	memcheck_begin_process(test_name());
}

/* A "threadsafe" death test's child, started again from the program's
 * file: GoogleTest forwards no event to the listeners there, so its
 * region begins before main, named by the --gtest_filter its command
 * line holds (the one test it runs).  GoogleTest puts its flags after
 * the program's own arguments, however long those are: the command
 * line is read in pieces on the stack (about 1.3 KiB, given back before
 * main), each argument's head kept, never the whole line in the
 * program's memory. */
inline void started_child()
{
	static const char run[] = "--gtest_internal_run_death_test=", flt[] = "--gtest_filter=";
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char piece[256], arg[sizeof flt + 511], filter[512] = "death test";
	size_t have = 0;
	bool child = false;
	ssize_t n;
	do {
		n = read(fd, piece, sizeof piece);
		for (ssize_t i = 0; i <= n; i++) {
			bool end = i == n ? n == 0 && have > 0 : piece[i] == 0;
			if (!end) {
				if (i < n && have < sizeof arg - 1)
					arg[have++] = piece[i];
				continue;
			}
			arg[have] = 0;
			if (!strncmp(arg, run, sizeof run - 1))
				child = true;
			else if (!strncmp(arg, flt, sizeof flt - 1))
				snprintf(filter, sizeof filter, "%s", arg + sizeof flt - 1);
			have = 0;
		}
	} while (n > 0 || (n < 0 && errno == EINTR));
	close(fd);
	if (!child)
		return;
	snprintf(test_name(), 512, "%s", filter);
	child_region();
}

/* fork's child handler: the test's region, inherited, discarded; the
 * child's own in its place. */
inline void forked_child()
{
	bool in_test = region_open() != 0;
	close_unended();
	if (in_test)
		child_region();
}

/* Whether this process is a "threadsafe" death test's child, started
 * again to run one death test's statement. */
inline bool death_test_child()
{
#ifdef GTEST_FLAG_GET
	return !GTEST_FLAG_GET(internal_run_death_test).empty();
#else
	return !::testing::internal::GTEST_FLAG(internal_run_death_test).empty();
#endif
}

class Listener : public ::testing::EmptyTestEventListener {
	void OnTestStart(const ::testing::TestInfo &t) override
	{
		close_unended();
		if (death_test_child())
			return; /* its region began before main (started_child) */
		snprintf(test_name(), 512, "%s.%s", t.test_suite_name(), t.name());
		memcheck_begin(test_name());
		region_open() = 1;
	}

	void OnTestEnd(const ::testing::TestInfo &t) override
	{
		end_region(t);
		descendants(t);
	}

	/* A descendant (a death test's child) that failed while the test
	 * ran: the test's failure, at the test's line. */
	static void descendants(const ::testing::TestInfo &t)
	{
		static char program[1024];
		long pid;
		int n = memcheck_descendants_failed(&pid, program, sizeof program);
		if (n <= 0)
			return;
		::testing::Message why;
		why << "memcheck: descendant process " << pid << " (" << program
		    << ") failed during this test";
		if (n > 1)
			why << ", and " << n - 1 << " other descendant process" << (n > 2 ? "es" : "");
		why << ": a region of it failed (a death test's child that left memory behind "
		       "before it died; its own text and record say what)";
		ADD_FAILURE_AT(t.file(), t.line()) << why;
	}

	static void end_region(const ::testing::TestInfo &t)
	{
		if (!region_open())
			return;
		region_open() = 0;
		const ::testing::TestResult *result = t.result();
		if (result->Failed() || result->Skipped()) {
			memcheck_discard();
			return;
		}
		mcglue_scrub();
		/* GoogleTest reports the failure, and its status is the
		 * program's */
		struct mcglue_failure f = { NULL, 0, "" };
		if (mcglue_end('"', &f) <= 0)
			return;
		if (f.file)
			ADD_FAILURE_AT(f.file, f.line) << f.why;
		else
			ADD_FAILURE() << f.why;
	}
};

/* Appends the listener, once however many files include the header. */
inline void install_once()
{
	static bool done;
	if (done)
		return;
	done = true;
	atexit(close_unended);
	pthread_atfork(nullptr, nullptr, forked_child);
	started_child();
	::testing::UnitTest::GetInstance()->listeners().Append(new Listener);
}

/* Before main: in each file that includes the header. */
static const struct Install {
	Install() { install_once(); }
} install;

} /* namespace memcheck_gtest */

#endif /* MEMCHECK_GTEST_H */
