/*
 * regions_nested_sites.c - an outer region whose peak snapshot outgrows
 * its slot's array, then another region at its depth.  The outer region
 * holds blocks from 2^13 stacks when an inner region begins (the
 * snapshot taken then, into the slot: an array of 8,192 sites, 128
 * KiB), from 2^14 when it ends (the array grown to 16,384).  Before
 * session 44 the end's snapshot grew a copy of the region: the growth
 * unmapped the slot's array and left the slot holding it, and the next
 * region at that depth, covered by an inner one, wrote its snapshot
 * there (SIGSEGV).  Prints "ok" when both rounds end.
 */
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

#define LEVELS 14
static void *blocks[1 << LEVELS];
static int nblocks;

/* One frame a level, two return addresses in it: the bits of path pick
 * a distinct stack for each of the 2^LEVELS blocks. */
static __attribute__((noinline)) void level(int d, unsigned path)
{
	if (d == LEVELS) {
		blocks[nblocks++] = malloc(16);
		return;
	}
	if (path >> d & 1) {
		level(d + 1, path);
		__asm__ volatile("nop");
	} else {
		level(d + 1, path);
		__asm__ volatile("nop; nop");
	}
}

static void round_of(unsigned first, unsigned last)
{
	memcheck_begin("outer");
	for (unsigned p = first; p < first + (last - first) / 2; p++)
		level(0, p);
	memcheck_begin("inner");
	memcheck_end(NULL);
	for (unsigned p = first + (last - first) / 2; p < last; p++)
		level(0, p);
	memcheck_end(NULL);
	while (nblocks)
		free(blocks[--nblocks]);
}

int main(void)
{
	round_of(0, 1u << LEVELS);
	round_of(0, 2);
	printf("ok\n");
	return 0;
}
