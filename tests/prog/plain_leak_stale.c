/*
 * plain_leak_stale.c - an address a live frame still holds after its
 * block was freed, handed out again to a block that is then lost
 * (preloaded only, never linked to memcheck; no stdio;
 * tests/test_leakkinds.c).
 *
 * Usage: plain_leak_stale stale|live.  main keeps a block's address in
 * a local of its own frame, frees the block, and calls lose(), which
 * allocates a block of the same size and drops it.  "stale": main's
 * local keeps the freed address; "live": main stores lose()'s block in
 * that local, as a program that keeps its block does.  Where the
 * allocator hands the freed address out again at once (glibc's tcache,
 * jemalloc's and tcmalloc's thread caches), both modes leave the same
 * bytes in memory at the exit: the local holds the new block's address.
 * valgrind, whose heap does not hand a freed address out again until 20
 * MB of frees later, says definitely lost in "stale" and still reachable
 * in "live"; a scan of the memory at the exit cannot tell them apart
 * (memcheck(7), LEAK KINDS).  Writes "reused" to standard error where
 * the new block has the freed one's address, and exits 0 from main's frame (exit).
 */
#include <stdint.h>
#include <unistd.h>

#include "plain_leak_common.h"

static int reused;

__attribute__((noinline)) static void *lose(uintptr_t was)
{
	void *p = malloc(32);
	memset(p, 2, 32);
	reused = (uintptr_t)p == was;
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "stale") && strcmp(argv[1], "live")))
		return 2;
	void *volatile mine = malloc(32); /* main's frame: a root to the end */
	memset(mine, 1, 32);
	uintptr_t was = (uintptr_t)mine;
	free(mine);
	if (!strcmp(argv[1], "live"))
		mine = lose(was);
	else
		lose(was); /* its address only in rax, which the calls below reuse */
	scrub();
	if (reused)
		(void)!write(2, "reused\n", 7);
	exit(0); /* main's frame live under the exit's scan, as a test
		  * framework's under its check */
}
