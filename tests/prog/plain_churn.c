/*
 * plain_churn.c - malloc, calloc, realloc and free, and nothing else, in
 * a loop whose length is its argument: what one call of the family costs
 * is the slope between two lengths (tests/test_leftout.c runs it under
 * callgrind).  Not linked to memcheck; no stdio.
 *
 * usage: plain_churn ROUNDS [usable]
 *   each round frees a block of a ring of 64, allocates one (malloc and
 *   calloc in turn) and reallocs another; prints "usable N errno E": N
 *   the sum of malloc_usable_size over every block the allocator handed
 *   out (with "usable" only, 0 without: a call of its own), which
 *   depends on the allocator alone, and E errno at the end (set to 77
 *   before the loop: no successful call may change it).  Exits 0.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 64

static void *ring[RING];

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	int sizes = argc > 2 && strcmp(argv[2], "usable") == 0;
	unsigned long usable = 0;
	errno = 77;
	for (long i = 0; i < rounds; i++) {
		int k = (int)(i % RING);
		size_t sz = (size_t)((i * 37) % 500) + 1;
		free(ring[k]);
		void *p = (i & 1) ? malloc(sz) : calloc(1, sz);
		if (!p)
			return 1;
		if (sizes)
			usable += malloc_usable_size(p);
		memset(p, (int)i, sz);
		int j = (k + RING / 2) % RING;
		void *q = realloc(ring[j], sz / 2 + 1);
		if (!q)
			return 1;
		if (sizes)
			usable += malloc_usable_size(q);
		ring[j] = q;
		ring[k] = p;
	}
	int e = errno;
	for (int k = 0; k < RING; k++)
		free(ring[k]);
	char line[64];
	int n = snprintf(line, sizeof line, "usable %lu errno %d\n", usable, e);
	return write(1, line, (size_t)n) == n ? 0 : 2;
}
