/*
 * cxx_gtest.cc - a gtest program that leaks from two tests
 * (tests/test_cxxnames.c, built where gtest is installed): its frames
 * are gtest's, named as valgrind names them (FooTest_Bar_Test::TestBody(),
 * testing::Test::Run()), and, built at -O2, its main is
 * libgtest_main.a's, without debug information, linked after the test
 * file's initializers: valgrind gives it no file:line.
 */
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace cache {
class Store {
public:
	void put(const std::string &k) { items_.push_back(new std::string(k)); }
	std::vector<std::string *> items_;
};
} // namespace cache

TEST(FooTest, Bar)
{
	auto *s = new cache::Store();
	s->put("a key longer than fifteen characters");
	EXPECT_EQ(s->items_.size(), 1u);
}

class Fixture : public ::testing::Test {
protected:
	int *p = nullptr;
};

TEST_F(Fixture, Leaks)
{
	p = new int[7];
	std::unique_ptr<int> q(new int(3));
	(void)q.release();
}
