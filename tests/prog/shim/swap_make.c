/* The two libraries tests/prog/regions_dlswap.c opens one after the
 * other at one address: built twice from this file, SWAP_NAME naming
 * the function that allocates (swap_a_make, swap_b_make), the same code
 * and size in both. */
#include <stdlib.h>
#include <string.h>

void *swap_make(size_t n);

__attribute__((noinline)) static void *SWAP_NAME(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 7, n);
	return p;
}

void *swap_make(size_t n)
{
	void *p = SWAP_NAME(n);
	__asm__ volatile("" ::: "memory"); /* no tail call: its frame stays */
	return p;
}
