/* Memory the program takes from the break itself (an arena of its own,
 * an embedded allocator's morecore): valgrind scans its brk segment, so
 * a block only a word there points to is still reachable.  A break given
 * back holds nothing: a block only it pointed to is lost.  Blocks: one
 * kept by sbrk's memory (64 B), one by brk's (80 B) -- still reachable;
 * one kept by memory given back (48 B) and one never kept (32 B) --
 * definitely lost.  memcheck took the first two for lost (lib/mappings.c
 * wrapped the mmap family alone). */
#include <stdint.h>
#include <unistd.h>

#include "plain_leak_common.h"

static void *volatile kept;

int main(void)
{
	/* every block first: a later malloc may grow the heap by the break */
	void *by_sbrk = malloc(64), *by_brk = malloc(80), *by_freed = malloc(48);
	kept = malloc(32);
	memset(by_sbrk, 0, 64);
	memset(by_brk, 0, 80);
	memset(by_freed, 0, 48);
	kept = NULL;
	/* an odd increment first: the words after it are whole */
	if (sbrk(13) == (void *)-1)
		return 1;
	char *a = sbrk(8192);
	if (a == (void *)-1)
		return 1;
	void **w = (void **)(((uintptr_t)a + 7) & ~(uintptr_t)7);
	w[10] = by_sbrk;
	char *b = sbrk(0);
	if (brk(b + 4096) != 0)
		return 1;
	((void **)(((uintptr_t)b + 7) & ~(uintptr_t)7))[3] = by_brk;
	char *c = sbrk(4096);
	if (c == (void *)-1)
		return 1;
	((void **)(((uintptr_t)c + 7) & ~(uintptr_t)7))[5] = by_freed;
	if (sbrk(-4096) == (void *)-1)
		return 1;
	by_sbrk = by_brk = by_freed = NULL;
	scrub();
	return 0;
}
