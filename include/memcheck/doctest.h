/*
 * memcheck/doctest.h - glue for doctest (2.4).
 *
 * One line, in one source file of the test program (after doctest.h),
 * puts every test case under memcheck:
 *
 *     #include <memcheck/doctest.h>
 *
 * Each test case (every run of its body, one a SUBCASE path) is a
 * region named after it, and one that leaves memory behind fails with
 * doctest's own failed CHECK, at the line that allocated the block, in
 * its console, XML and JUnit output, its summary and its exit status.
 *
 * Traps that shaped it:
 * - Preloaded alone, a leaking test case is reported passed: doctest
 *   runs every test case in one process, and the process region fails
 *   the run at its exit (status 23), naming no test.
 * - doctest runs no code of the program's between a test case's last
 *   run and its verdict, and counts that verdict before any reporter or
 *   listener hears of the test case's end.  Listeners hear it first, so
 *   ours ends the region there and reports the leak as a failed CHECK
 *   through every reporter (a JUnit report shows assertions, not
 *   messages); and since the counts are taken, it marks the test case
 *   failed in what the reporters are handed next (that test case's
 *   figures, then the run's, which doctest's status is read from).
 * - A test case that failed (or was expected to fail) on its own keeps
 *   its result: its region is discarded unreported (a REQUIRE leaves the
 *   body before its frees).
 *
 * Link with -lmemcheck.
 */
#ifndef MEMCHECK_DOCTEST_H
#define MEMCHECK_DOCTEST_H

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* With DOCTEST_CONFIG_DISABLE the tests are compiled out: nothing to do. */
#ifndef DOCTEST_CONFIG_DISABLE

namespace memcheck_doctest {

/* Test cases this glue failed, to add to the run's figures. */
inline unsigned &failed_here()
{
	static unsigned n;
	return n;
}

struct Listener : public doctest::IReporter {
	explicit Listener(const doctest::ContextOptions &) {}

	void test_case_start(const doctest::TestCaseData &tc) override
	{
		memcheck_begin(tc.m_name);
		open = true;
		test = &tc;
	}

	void test_case_end(const doctest::CurrentTestCaseStats &st) override
	{
		if (!open)
			return;
		open = false;
		if (!st.testCaseSuccess || st.failure_flags != doctest::TestCaseFailureReason::None) {
			memcheck_discard(); /* its own result stands */
			return;
		}
		mcglue_scrub();
		if (end_region(test))
			fail(st);
	}

	/* The run's figures, which the reporters print and doctest's status
	 * is read from (after the listeners), counted before this glue's
	 * failures. */
	void test_run_end(const doctest::TestRunStats &st) override
	{
		doctest::TestRunStats &run = const_cast<doctest::TestRunStats &>(st);
		run.numTestCasesFailed += failed_here();
		run.numAsserts += (int)failed_here();
		run.numAssertsFailed += (int)failed_here();
		failed_here() = 0;
	}

	void report_query(const doctest::QueryData &) override {}
	void test_run_start() override {}
	void test_case_reenter(const doctest::TestCaseData &) override {}
	void test_case_exception(const doctest::TestCaseException &) override {}
	void subcase_start(const doctest::SubcaseSignature &) override {}
	void subcase_end() override {}
	void log_assert(const doctest::AssertData &) override {}
	void log_message(const doctest::MessageData &) override {}
	void test_case_skipped(const doctest::TestCaseData &) override {}

private:
	bool open = false;
	const doctest::TestCaseData *test = nullptr;

	/* The region ends; a leak is a failed CHECK at its site, through
	 * every reporter: true where it failed. */
	static bool end_region(const doctest::TestCaseData *tc)
	{
		struct mcglue_failure f = { tc->m_file.c_str(), (int)tc->m_line, "" };
		if (mcglue_end('"', &f) <= 0)
			return false;
		doctest::detail::ResultBuilder rb(doctest::assertType::DT_CHECK, f.file, f.line,
						  "memcheck_end() == 0");
		rb.m_failed = true;
		rb.m_decomp = f.why;
		rb.log();
		return true;
	}

	/* The test case's figures, counted before its failure here. */
	static void fail(const doctest::CurrentTestCaseStats &st)
	{
		doctest::CurrentTestCaseStats &cur = const_cast<doctest::CurrentTestCaseStats &>(st);
		cur.numAssertsCurrentTest++;
		cur.numAssertsFailedCurrentTest++;
		cur.failure_flags |= doctest::TestCaseFailureReason::AssertFailure;
		cur.testCaseSuccess = false;
		failed_here()++;
	}
};

DOCTEST_REGISTER_LISTENER("memcheck", 0, Listener);

} /* namespace memcheck_doctest */

#endif /* DOCTEST_CONFIG_DISABLE */

#endif /* MEMCHECK_DOCTEST_H */
