/* Aligned blocks split from one chunk by the C library's memalign: the
 * third starts where an earlier split left the arena's remainder hint
 * (last_remainder), stale since, and the program keeps it only by an
 * interior pointer.  Under glibc, memcheck took the hint for a pointer
 * of the program's to the block's start: still reachable, where valgrind
 * (which replaces the allocator) says possibly lost.  See
 * plain_leak_remainder. */
#include <malloc.h>

#include "plain_leak_common.h"

void *keep[2];
char *volatile inner;

__attribute__((noinline)) static void at_hint(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, 112) != 0)
		abort();
	keep[0] = p;
	keep[1] = aligned_alloc(64, 128);
	inner = (char *)memalign(256, 1008) + 8;
}

int main(void)
{
	at_hint();
	scrub();
	return 0;
}
