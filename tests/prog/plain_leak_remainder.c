/* A block carved over a chunk the C library's allocator once split: its
 * arena keeps the split's remainder as a hint (last_remainder), which goes
 * stale when that chunk is handed out or merged.  Under glibc, memcheck
 * took the stale hint for a pointer of the program's (libc's data is a
 * root): the lost block, 1,008 bytes past whose start the hint lies, was
 * possibly lost where valgrind (which replaces the allocator) says
 * definitely lost.  The arena is no root now (lib/glibcarena.c).  Under
 * the other allocators glibc's arena is never used: the same figures.
 * plain_leak_aligned is the other shape of the same hint. */
#include "plain_leak_common.h"

void *keep;

/* Seven 512-byte chunks fill the thread's cache for that size, so that
 * the two freed after them merge with the rest of x again; the hint
 * (x's remainder after the second split) then lies inside the block
 * made over x. */
__attribute__((noinline)) static void over_hint(void)
{
	void *volatile fill[7];
	for (int i = 0; i < 7; i++)
		fill[i] = malloc(496);
	void *volatile x = malloc(4000);
	keep = malloc(16); /* x not next to the top chunk */
	free(x);
	void *volatile a = malloc(496), *volatile b = malloc(496);
	for (int i = 0; i < 7; i++)
		free(fill[i]);
	free(a);
	free(b);
	char *volatile lost = malloc(3008);
	memset(lost, 1, 3008);
	lost = NULL;
	x = a = b = NULL;
}

int main(void)
{
	over_hint();
	scrub();
	return 0;
}
