/*
 * cxx_names.cc - leaks made through the shapes of C++ function names
 * (tests/test_cxxnames.c): a template's members in nested namespaces, an
 * operator, a constructor, an anonymous namespace's function, a static
 * member, lambdas called directly and through std::function, an
 * inlined function, std::vector and std::map growing.  Built twice:
 * with the test programs' flags (-O1 -fno-inline: every call but the
 * always_inline one a frame) and -O2 (frames inlined into others).
 * Every block is lost on purpose; nothing is printed.
 *
 * cxx_names site: one region (memcheck's API, found by dlsym: memcheck is
 * preloaded) that leaks a Widget's array; prints what memcheck_leak_site
 * says of it, "FUNCTION FILE:LINE", or "none".
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
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

static int leak_site()
{
	typedef void (*begin_fn)(const char *);
	typedef int (*end_fn)(void *);
	typedef int (*site_fn)(const char **, int *, const char **);
	begin_fn begin = (begin_fn)dlsym(RTLD_DEFAULT, "memcheck_begin");
	end_fn end = (end_fn)dlsym(RTLD_DEFAULT, "memcheck_end");
	site_fn site = (site_fn)dlsym(RTLD_DEFAULT, "memcheck_leak_site");
	if (!begin || !end || !site) {
		puts("no memcheck");
		return 1;
	}
	begin("widget");
	sink = Widget::make(5);
	sink = nullptr;
	end(nullptr);
	const char *file = nullptr, *fn = nullptr;
	int line = 0;
	if (site(&file, &line, &fn) != 0) {
		puts("none");
		return 0;
	}
	const char *base = strrchr(file, '/');
	printf("%s %s:%d\n", fn, base ? base + 1 : file, line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "site"))
		return leak_site();
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
