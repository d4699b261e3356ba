/*
 * cxx_new.cc - C++ operator new and delete under memcheck
 * (tests/test_cxx.c): every variant of the family, a leak, and the
 * failure semantics (std::bad_alloc, nothrow, the new_handler).  Not
 * linked to memcheck; no stdio (its buffer is one more block, which
 * valgrind frees at exit and memcheck does not); built without allocation
 * elision (-fno-allocation-dce), so each new and delete is a call.
 *
 * usage: cxx_new empty|leak|fail|inject|phases
 *   empty   nothing: what the C++ runtime and the allocator allocate alone
 *   leak    22 allocations through every operator new, all freed through
 *           the matching delete, but one 32-byte object lost and one kept
 *           in a global (still reachable); the plain new called through
 *           its address (a canonical PLT entry when built -no-pie)
 *   fail    too large requests: bad_alloc thrown and caught, nothrow
 *           returns NULL, a new_handler called once; then 1,000 new and
 *           delete pairs, which must all be counted
 *   inject  a new_handler that only counts, then 10 new and delete pairs:
 *           with MEMCHECK_FAIL_NTH=1 the first call fails, the handler
 *           runs once and the retry succeeds
 *   phases  plain_shapes' three phases with new and delete
 *   zero    four new of 0 bytes (plain, array, nothrow; one lost, one
 *           kept in a global, two deleted): 0 bytes each, as valgrind
 *           counts them, where libstdc++'s new asks malloc for 1
 * Exit status 0 when the program saw what C++ promises, 1 otherwise, with
 * the reason on standard error.
 */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

struct Obj {
	long a, b, c, d; /* 32 bytes */
};

struct alignas(64) Wide {
	char bytes[64];
};

Obj *kept;                  /* still reachable at exit */
static int handler_calls;

static int fail(const char *why)
{
	ssize_t r = write(2, why, strlen(why));
	r = write(2, "\n", 1);
	(void)r;
	return 1;
}

/* Every operator new and delete of C++17 once; the program's own
 * allocations are 22, two of them kept. */
/* operator new's address, taken in code: built -no-pie, the program then
 * has a canonical PLT entry for it (tests/test_nopie.c). */
static void *(*volatile plain_new)(size_t);

static bool aligned(const void *p, size_t a)
{
	return reinterpret_cast<uintptr_t>(p) % a == 0;
}

static int leak(void)
{
	plain_new = &::operator new;
	const std::align_val_t al{ 64 };
	const std::nothrow_t &nt = std::nothrow;
	Obj *lost = new Obj{ 1, 2, 3, 4 };              /* definitely lost */
	lost->a = 5;
	lost = nullptr;
	kept = new Obj{ 5, 6, 7, 8 };                   /* still reachable */
	delete new Obj{ 0, 0, 0, 0 };
	void *p = plain_new(40);
	::operator delete(p);
	p = ::operator new[](40);
	::operator delete[](p);
	p = ::operator new(40);
	::operator delete(p, 40);
	p = ::operator new[](40);
	::operator delete[](p, 40);
	p = ::operator new(40, nt);
	::operator delete(p, nt);
	p = ::operator new[](40, nt);
	::operator delete[](p, nt);
	p = ::operator new(40, al);
	if (!aligned(p, 64))
		return fail("operator new(40, align_val_t(64)) is not aligned");
	::operator delete(p, al);
	p = ::operator new[](40, al);
	::operator delete[](p, al);
	p = ::operator new(40, al);
	::operator delete(p, 40, al);
	p = ::operator new[](40, al);
	::operator delete[](p, 40, al);
	p = ::operator new(40, al, nt);
	if (!aligned(p, 64))
		return fail("operator new(40, align_val_t(64), nothrow) is not aligned");
	::operator delete(p, al, nt);
	p = ::operator new[](40, al, nt);
	::operator delete[](p, al, nt);
	Wide *w = new Wide;                             /* the compiler's aligned new */
	if (!aligned(w, 64))
		return fail("new Wide is not 64-byte aligned");
	delete w;
	std::string *s = new std::string(100, 'x');     /* two allocations */
	delete s;
	std::vector<int> v;                             /* four: 1, 2, 4, 8 ints */
	for (int i = 0; i < 5; i++)
		v.push_back(i);
	return 0;
}

static int fail_cases(void)
{
	const size_t huge = (size_t)1 << 62;
	bool thrown = false;
	try {
		char *p = new char[huge];
		p[0] = 1;
	} catch (const std::bad_alloc &) {
		thrown = true;
	}
	if (!thrown)
		return fail("new char[2^62] did not throw std::bad_alloc");
	if (new (std::nothrow) char[huge] != nullptr)
		return fail("new (std::nothrow) char[2^62] did not return NULL");
	std::set_new_handler([] {
		handler_calls++;
		std::set_new_handler(nullptr); /* the next failure throws */
	});
	thrown = false;
	try {
		char *p = new char[huge];
		p[0] = 1;
	} catch (const std::bad_alloc &) {
		thrown = true;
	}
	if (!thrown || handler_calls != 1)
		return fail("the new_handler was not called once before std::bad_alloc");
	for (int i = 0; i < 1000; i++)
		delete new Obj{ i, 0, 0, 0 };
	return 0;
}

static int inject(void)
{
	std::set_new_handler([] { handler_calls++; });
	for (int i = 0; i < 10; i++)
		delete new Obj{ i, 0, 0, 0 };
	std::set_new_handler(nullptr);
	const char *n = getenv("MEMCHECK_FAIL_NTH");
	int want = n && *n ? 1 : 0;
	if (handler_calls != want)
		return fail(want ? "the new_handler did not run once for the injected failure"
				 : "the new_handler ran without a failure");
	return 0;
}

static void phase(size_t n, size_t size)
{
	char **v = new char *[n];
	for (size_t i = 0; i < n; i++) {
		v[i] = new char[size];
		memset(v[i], 1, size);
	}
	for (size_t i = 0; i < n; i++)
		delete[] v[i];
	delete[] v;
}

/* new of 0 bytes: libstdc++'s plain new asks malloc for 1 byte (the
 * array and nothrow forms call it), which memcheck counted under glibc
 * where valgrind and the other allocators count 0 (yaml-cpp's gtest
 * suite: std::__numpunct_cache's new[](0)). */
static void *kept_zero;

static int zero(void)
{
	char *lost = new char[0];                 /* definitely lost, 0 bytes */
	if (!lost)
		return fail("new char[0] returned NULL");
	lost = nullptr;
	kept_zero = ::operator new(0);            /* still reachable, 0 bytes */
	delete[] new char[0];
	::operator delete(::operator new(0, std::nothrow));
	return kept_zero ? 0 : fail("operator new(0) returned NULL");
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	std::string mode = argv[1];
	if (mode == "empty")
		return 0;
	if (mode == "leak")
		return leak();
	if (mode == "fail")
		return fail_cases();
	if (mode == "inject")
		return inject();
	if (mode == "zero")
		return zero();
	if (mode == "phases") {
		phase(1000000, 64);
		phase(250000, 256);
		phase(16000, 4096);
		return 0;
	}
	return 2;
}
