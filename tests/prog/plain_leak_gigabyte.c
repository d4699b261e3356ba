/* Blocks that start on a gigabyte: the main thread loses one and keeps
 * one in a global, a thread still blocked in read at the exit loses one.
 * jemalloc keeps, in each thread's thread-local data, the keys of the
 * cache of its radix tree: the start of the gigabyte of each address it
 * looked up, which is such a block's address.  memcheck scanned that
 * data as the program's, and both lost blocks were still reachable
 * under jemalloc (and one sleeper's block in a hundred runs of
 * plain_leak_asleep, where a new arena's first block fell on a
 * gigabyte); valgrind, which replaces the allocator, aborts on the
 * alignment.  Definitely lost: 2 blocks, 128 bytes; the kept block (48
 * bytes) still reachable (lib/roots.c add_thread_mapped). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "plain_leak_common.h"

#define GIGABYTE ((size_t)1 << 30)

static void *volatile kept;
static int ready[2], never[2];

/* A lost block on a gigabyte, or say why not. */
static __attribute__((noinline)) int lose_one(void)
{
	char *volatile lost = aligned_alloc(GIGABYTE, 64);
	if (!lost || (uintptr_t)lost % GIGABYTE)
		return -1;
	for (int k = 0; k < 64; k++)
		lost[k] = 0;
	lost = NULL;
	scrub();
	return 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	char c = lose_one() ? 'n' : 'y';
	if (write(ready[1], &c, 1) != 1)
		return NULL;
	while (read(never[0], &c, 1) != 0) /* no writer writes: until the exit */
		;
	return NULL;
}

int main(void)
{
	if (pipe(ready) || pipe(never))
		return 2;
	pthread_t t;
	if (pthread_create(&t, NULL, sleeper, NULL))
		return 2;
	char c = 0;
	if (read(ready[0], &c, 1) != 1 || c != 'y' || lose_one()) {
		fputs("no block on a gigabyte\n", stderr);
		return 2;
	}
	kept = aligned_alloc(GIGABYTE, 48);
	if (!kept || (uintptr_t)kept % GIGABYTE)
		return 2;
	scrub();
	return 0;
}
