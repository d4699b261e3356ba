/*
 * audit25b_stale_result.c - a region ended by memcheck_end(&r) from a
 * function called after the code under test returned, as check's
 * teardown (memcheck/check.h) and the cmocka and Criterion glues do: r
 * is uninitialized stack, and what an earlier frame left there (here a
 * copy of the leaked block's address, put where r will lie by a frame
 * of the same shape) is not a reference to the block.  It prints what
 * r says; the block is definitely lost.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

#define MASK 0x5a5a5a5a5a5a5a5aull

/* The leaked block's address, masked: no root of the scan holds it. */
static volatile uintptr_t masked;

__attribute__((noinline)) static void leak(void)
{
	char *p = malloc(40);
	p[0] = 'x';
	masked = (uintptr_t)p ^ MASK;
}

/* Copies of the address in the middle of a struct where teardown's will
 * be (the first and last slots left alone, in case the two frames'
 * layouts differ by a slot), then forgotten. */
__attribute__((noinline)) static void stain(void)
{
	struct memcheck_result junk;
	volatile uintptr_t *w = (volatile uintptr_t *)(void *)&junk;
	size_t n = sizeof junk / sizeof *w;
	for (size_t i = 4; i + 4 < n; i++)
		w[i] = masked ^ MASK;
	masked = 0;
}

__attribute__((noinline)) static int teardown(void)
{
	struct memcheck_result r;
	int rc = memcheck_end(&r);
	printf("definitely lost %llu in %llu, reachable %llu, pass %d\n",
	       (unsigned long long)r.definitely_lost.bytes,
	       (unsigned long long)r.definitely_lost.blocks,
	       (unsigned long long)r.still_reachable.bytes, r.pass);
	return rc;
}

int main(void)
{
	memcheck_begin("stale");
	leak();
	stain();
	if (teardown() != 1)
		return 1;
	memcheck_handled(); /* the failure is expected: the status stays 0 */
	return 0;
}
