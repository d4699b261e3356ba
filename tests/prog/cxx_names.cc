/*
 * cxx_names.cc - leaks made through the shapes of C++ function names
 * (tests/test_cxxnames.c): a template's members in nested namespaces, an
 * operator, a constructor, an anonymous namespace's function, a static
 * member, lambdas called directly and through std::function, an
 * inlined function, std::vector and std::map growing.  Built twice:
 * with the test programs' flags (-O1 -fno-inline: every call but the
 * always_inline one a frame) and -O2 (frames inlined into others).
 * Every block is lost on purpose; nothing is printed.
 */
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace outer {
namespace inner {
template <typename T> struct Box {
	T *p;
	Box() : p(new T[4]) {}
	void grow(int n) { p = new T[n]; }
	Box &operator+=(int n)
	{
		grow(n);
		return *this;
	}
};
} // namespace inner
} // namespace outer

namespace {
__attribute__((noinline)) void *anon_leak(size_t n)
{
	return malloc(n);
}
} // namespace

struct Widget {
	int *q;
	explicit Widget(int n) : q(new int[n]) {}
	static Widget *make(int n);
};
__attribute__((noinline)) Widget *Widget::make(int n)
{
	return new Widget(n);
}

static inline __attribute__((always_inline)) void *inl_leak(size_t n)
{
	return malloc(n);
}
__attribute__((noinline)) void *via_inline(size_t n)
{
	return inl_leak(n);
}

/* volatile: the pointers are lost, not optimized away */
void *volatile sink;

int main()
{
	outer::inner::Box<long> *b = new outer::inner::Box<long>();
	*b += 7;
	sink = b;
	sink = anon_leak(33);
	sink = Widget::make(5);
	auto lam = [](int n) { return malloc(n); };
	sink = lam(44);
	std::function<void *(int)> f = [](int n) -> void * { return new char[n]; };
	sink = f(55);
	sink = via_inline(66);
	std::vector<int> *vec = new std::vector<int>();
	for (int i = 0; i < 10; i++)
		vec->push_back(i);
	sink = vec;
	std::map<std::string, int> *mp = new std::map<std::string, int>();
	(*mp)["a key longer than the sixteen bytes kept in place"] = 1;
	sink = mp;
	sink = nullptr;
	return 0;
}
