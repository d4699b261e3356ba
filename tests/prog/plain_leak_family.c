/* Every allocation function, each block lost (definite).  But pvalloc:
 * valgrind 3.19 aborts the program at a call to it. */
#include <malloc.h>
#include "plain_leak_common.h"

__attribute__((noinline)) static void lose(void)
{
	void *volatile p;
	p = malloc(16);
	p = calloc(3, 16);
	p = realloc(NULL, 32);
	p = realloc(malloc(16), 160);
	p = reallocarray(NULL, 5, 16);
	void *q = NULL;
	if (posix_memalign(&q, 64, 64) == 0)
		p = q;
	p = aligned_alloc(128, 256);
	p = memalign(32, 96);
	p = valloc(64);
	(void)p;
}

int main(void)
{
	lose();
	scrub();
	return 0;
}
