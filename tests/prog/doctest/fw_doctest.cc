/*
 * fw_doctest.cc - a doctest suite under memcheck/doctest.h
 * (tests/test_frameworks.c): one test case clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails a REQUIRE of its
 * own, one skipped, one with two subcases of which one leaks, and a
 * fixture whose constructor allocates what its destructor frees.  The
 * line marked SITE (fw_site.h) is where the leak's failure must point.  Built
 * without MEMCHECK_GLUE, the same suite with no glue: what a preloaded
 * memcheck alone makes of it.
 */
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "../fw_site.h"

#ifdef MEMCHECK_GLUE
#include <memcheck/doctest.h>
#endif


TEST_CASE("clean")
{
	char *p = copy_of("clean");
	CHECK(std::string(p) == "clean");
	free(p);
}

TEST_CASE("leaks")
{
	CHECK(copy_of("a block this test never frees") != nullptr);
}

TEST_CASE("leaks and fails")
{
	char *p = copy_of("leaks and fails");
	REQUIRE(p == nullptr);
	free(p);
}

TEST_CASE("leaks and skips" * doctest::skip())
{
	CHECK(copy_of("skipped") != nullptr);
}

TEST_CASE("subcases")
{
	char *shared = copy_of("shared");
	SUBCASE("clean subcase")
	{
		free(copy_of("clean subcase"));
	}
	SUBCASE("leaking subcase")
	{
		CHECK(copy_of("leaking subcase") != nullptr);
	}
	free(shared);
}

struct Fixture {
	Fixture() : buf(static_cast<char *>(malloc(64))) {}
	~Fixture() { free(buf); }
	char *buf;
};

TEST_CASE_FIXTURE(Fixture, "with fixture")
{
	std::string s(200, 'x');
	strcpy(buf, "fixture");
	CHECK(s.size() == 200u);
}
