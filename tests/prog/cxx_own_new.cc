/*
 * cxx_own_new.cc - a program with its own operator new (gdb's, which
 * calls malloc and hands the block back), and nothing else to do.
 *
 * An allocator loaded into it whose start-up code calls new (tcmalloc's
 * TCMallocGuard registers its MallocExtension, 16 bytes, and keeps it in
 * its own data for the life of the process) gets the program's operator
 * new: the block's first frame is the program's, its call site the
 * allocator's.  valgrind calls it still reachable (gdb --version under
 * tcmalloc: 16 bytes, from tcmalloc's current_instance).
 *
 * Usage: cxx_own_new.  Prints "ok"; exits 0.
 */
#include <cstdio>
#include <cstdlib>
#include <new>

void *operator new(std::size_t n)
{
	void *p = std::malloc(n ? n : 1);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void operator delete(void *p) noexcept
{
	std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

int main()
{
	std::puts("ok");
	return 0;
}
