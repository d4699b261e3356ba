/*
 * fw_gtest.cc - a GoogleTest suite under memcheck/gtest.h
 * (tests/test_frameworks.c): one test clean, one that leaks a block
 * copy_of() allocates, one that leaks and then fails an assertion of its
 * own, one that leaks and skips itself, a clean fixture whose SetUp
 * allocates what its TearDown frees, and clean death tests in both
 * styles; apart (GTEST_FILTER), death tests whose children leak.  The
 * line marked SITE is where the
 * leak's failure must point.
 */
#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <memcheck/gtest.h>

static char *copy_of(const char *s)
{
	char *p = static_cast<char *>(malloc(strlen(s) + 1)); /* SITE copy_of */
	strcpy(p, s);
	return p;
}

TEST(Core, Clean)
{
	char *p = copy_of("clean");
	EXPECT_STREQ(p, "clean");
	free(p);
}

TEST(Core, Leaks)
{
	EXPECT_NE(copy_of("a block this test never frees"), nullptr);
}

TEST(Core, LeaksAndFails)
{
	char *p = copy_of("leaks and fails");
	ASSERT_EQ(p, nullptr) << "the test's own failure";
	free(p);
}

TEST(Core, LeaksAndSkips)
{
	EXPECT_NE(copy_of("skips"), nullptr);
	GTEST_SKIP() << "skipped";
}

class WithFixture : public ::testing::Test {
protected:
	void SetUp() override { buf = static_cast<char *>(malloc(64)); }
	void TearDown() override { free(buf); }
	char *buf = nullptr;
};

TEST_F(WithFixture, Clean)
{
	std::string s(200, 'x');
	ASSERT_NE(buf, nullptr);
	EXPECT_EQ(s.size(), 200u);
}

/* The children die inside the test, the first holding a block its test
 * region had open at the fork: their death is the test. */
TEST(Death, Aborts)
{
	char *p = copy_of("the parent's");
	EXPECT_DEATH(abort(), "");
	free(p);
}

TEST(Death, ThreadsafeAborts)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_DEATH(abort(), "");
}

/* Death tests whose children leak a block before they die (run alone,
 * GTEST_FILTER=DeathLeaks.*): each child fails its own process region,
 * and the test that started it fails with it, in both styles. */
static char *volatile lost;

__attribute__((noinline)) static void lose_a_block()
{
	lost = copy_of("the child's");
	lost = nullptr;
}

TEST(DeathLeaks, Forked)
{
	GTEST_FLAG_SET(death_test_style, "fast");
	EXPECT_DEATH({ lose_a_block(); abort(); }, "");
}

TEST(DeathLeaks, Threadsafe)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_DEATH({ lose_a_block(); abort(); }, "");
}

TEST(DeathLeaks, Clean)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_DEATH(abort(), "");
}
