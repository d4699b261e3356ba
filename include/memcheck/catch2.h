/*
 * memcheck/catch2.h - glue for Catch2 (version 2, the single header
 * catch.hpp).
 *
 * One line, in the source file of the test program that defines
 * CATCH_CONFIG_MAIN or CATCH_CONFIG_RUNNER (after catch.hpp), puts every
 * test case under memcheck:
 *
 *     #include <memcheck/catch2.h>
 *
 * (in another file, one that defines CATCH_CONFIG_EXTERNAL_INTERFACES
 * before catch.hpp, as Catch2's listeners need).
 *
 * Each run of a test case's body (once per leaf SECTION or generated
 * value, as Catch2 runs it) is a region named after the test case, and
 * one that leaves memory behind fails the test case with Catch2's own
 * failure, at the line that allocated the block, in its console, JUnit,
 * XML and every other reporter's output, and in its exit status.
 *
 * Traps that shaped it:
 * - Preloaded alone, a leaking test case is reported passed: Catch2 runs
 *   every test case in one process, and the process region fails the run
 *   at its exit (status 23), naming no test.
 * - Catch2 runs no code of the program's between a test case's body and
 *   the count that decides its verdict but its event listeners'.  A
 *   listener hears the end of the test case's own section (its body and
 *   every SECTION in it) before the reporters do, while the test case is
 *   still the running one and its failures still count: an assertion
 *   made there fails the test case, shown where the reporters show any.
 * - The file of a failure must outlive the run (the JUnit reporter
 *   writes at the end): leak sites' file names are kept for the
 *   process's life, taken after the region ended.
 * - A test case that failed on its own in this run keeps that failure:
 *   its region is discarded unreported (a REQUIRE leaves the body before
 *   its frees).
 * - Registered once however many files include the header: Catch2's own
 *   CATCH_REGISTER_LISTENER registers one listener a file.
 *
 * Link with -lmemcheck.
 */
#ifndef MEMCHECK_CATCH2_H
#define MEMCHECK_CATCH2_H

#include <memory>
#include <set>
#include <string>

#include "memcheck/glue.h"
#include "memcheck/memcheck.h"

/* With CATCH_CONFIG_DISABLE the tests are compiled out: nothing to do.
 * catch.hpp declares the listeners' base classes only where it is asked
 * for its interfaces (the main's file asks by itself). */
#if defined(CATCH_CONFIG_DISABLE)
#elif !defined(CATCH_CONFIG_EXTERNAL_INTERFACES)
#error "memcheck/catch2.h: include it in the file that defines CATCH_CONFIG_MAIN or CATCH_CONFIG_RUNNER, or define CATCH_CONFIG_EXTERNAL_INTERFACES before <catch2/catch.hpp>"
#else

namespace memcheck_catch2 {

/* The leak's site's file, kept for the run (the reporters keep the
 * pointer). */
inline const char *kept_file(const char *file)
{
	static std::set<std::string> *files = new std::set<std::string>;
	return files->insert(file).first->c_str();
}

class Listener : public Catch::TestEventListenerBase {
public:
	using TestEventListenerBase::TestEventListenerBase;

	void sectionStarting(Catch::SectionInfo const &info) override
	{
		/* depth 0: the test case's own section, one run of its body */
		if (depth++ == 0)
			memcheck_begin(info.name.c_str());
	}

	void sectionEnded(Catch::SectionStats const &stats) override
	{
		if (--depth != 0)
			return;
		if (stats.assertions.failed > 0) {
			memcheck_discard(); /* the test's own failure stands */
			return;
		}
		mcglue_scrub();
		end_region(stats.sectionInfo.lineInfo);
	}

private:
	int depth = 0;

	/* The region ends; a leak is the test case's failure, reported
	 * through Catch2 as an assertion of the test's (its status is the
	 * program's). */
	static void end_region(Catch::SourceLineInfo const &test)
	{
		struct mcglue_failure f = { test.file, (int)test.line, "" };
		if (mcglue_end('"', &f) <= 0)
			return;
		Catch::AssertionHandler handler("memcheck", Catch::SourceLineInfo(kept_file(f.file),
										 (std::size_t)f.line),
						Catch::StringRef(), Catch::ResultDisposition::ContinueOnFailure);
		handler.handleMessage(Catch::ResultWas::ExplicitFailure, f.why);
		handler.complete();
	}
};

class Factory : public Catch::IReporterFactory {
	Catch::IStreamingReporterPtr create(Catch::ReporterConfig const &config) const override
	{
		return std::unique_ptr<Listener>(new Listener(config));
	}
	std::string getDescription() const override
	{
		return "memcheck: a test case that leaves memory behind fails";
	}
};

/* Registers the listener, once however many files include the header. */
inline void install_once()
{
	static bool done;
	if (done)
		return;
	done = true;
	Catch::getMutableRegistryHub().registerListener(std::make_shared<Factory>());
}

/* Before main: in each file that includes the header. */
static const struct Install {
	Install() { install_once(); }
} install;

} /* namespace memcheck_catch2 */

#endif /* CATCH_CONFIG_DISABLE, CATCH_CONFIG_EXTERNAL_INTERFACES */

#endif /* MEMCHECK_CATCH2_H */
