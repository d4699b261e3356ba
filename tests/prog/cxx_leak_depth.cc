/*
 * cxx_leak_depth.cc - plain_leak_depth's two paths, whose stacks are the
 * same down to a given depth and differ only below it, through the
 * program's own operator new and new[] (gdb's shape: gdbsupport's
 * operator new calls malloc; here through a function of its own, which
 * valgrind never runs).  valgrind replaces the operators the program
 * defines as it replaces libstdc++'s: its frame 1 is the operator, and
 * the operator's callers follow, where memcheck's stack starts inside
 * the operator's callee, at its call of malloc (tests/test_valgrind.c).
 *
 * Usage: cxx_leak_depth K, as plain_leak_depth K: under valgrind, frame
 * 1 is operator new (new[] for the kept blocks), 2 leaf, 3 to K + 2
 * step, K + 3 left or right.  No stdio.
 */
#include <cstdlib>
#include <new>

static void *own_alloc(std::size_t n)
{
	void *p = std::malloc(n ? n : 1);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void *operator new(std::size_t n)
{
	return own_alloc(n);
}

void *operator new[](std::size_t n)
{
	return own_alloc(n);
}

void operator delete(void *p) noexcept
{
	std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

void operator delete[](void *p) noexcept
{
	std::free(p);
}

void operator delete[](void *p, std::size_t) noexcept
{
	std::free(p);
}

#define LEAK_ALLOC(keep) (keep ? static_cast<void *>(new char[48]) : ::operator new(32))
#include "plain_leak_depth.c"
