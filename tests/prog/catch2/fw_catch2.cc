/*
 * fw_catch2.cc - a Catch2 suite under memcheck/catch2.h
 * (tests/test_frameworks.c): one test case clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails a REQUIRE of its
 * own, one with two sections of which one leaks, and a fixture whose
 * constructor allocates what its destructor frees.  The line marked
 * SITE (fw_site.h) is where the leak's failure must point.  Built without
 * MEMCHECK_GLUE, the same suite with no glue: what a preloaded memcheck
 * alone makes of it.
 */
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

#include "../fw_site.h"

#ifdef MEMCHECK_GLUE
#include <memcheck/catch2.h>
#endif


TEST_CASE("clean", "[core]")
{
	char *p = copy_of("clean");
	CHECK(std::string(p) == "clean");
	free(p);
}

TEST_CASE("leaks", "[core]")
{
	CHECK(copy_of("a block this test never frees") != nullptr);
}

TEST_CASE("leaks and fails", "[core]")
{
	char *p = copy_of("leaks and fails");
	REQUIRE(p == nullptr);
	free(p);
}

TEST_CASE("sections", "[core]")
{
	char *shared = copy_of("shared");
	SECTION("clean section")
	{
		free(copy_of("clean section"));
	}
	SECTION("leaking section")
	{
		CHECK(copy_of("leaking section") != nullptr);
	}
	free(shared);
}

struct Fixture {
	Fixture() : buf(static_cast<char *>(malloc(64))) {}
	~Fixture() { free(buf); }
	char *buf;
};

TEST_CASE_METHOD(Fixture, "with fixture", "[fixture]")
{
	std::string s(200, 'x');
	strcpy(buf, "fixture");
	CHECK(s.size() == 200u);
}
