/* A leak from inlined code: the allocation's return address lies in
 * store(), inlined into keep(), so its stack has a frame for each.
 * tests/test_debuginfo.c finds the lines by their comments. */
#include "plain_leak_common.h"

static inline __attribute__((always_inline)) void *store(size_t n)
{
	void *volatile p = malloc(n); /* the leak */
	return p;
}

__attribute__((noinline)) static void keep(size_t n)
{
	void *volatile p = store(n); /* the inlined call */
	memset(p, 0, n);
}

int main(void)
{
	keep(64);
	scrub();
	return 0;
}
