/*
 * plain_mix.c - a varied, deterministic mix of malloc-family calls with
 * no stdio (whose buffers would be allocations of their own), for
 * comparing memcheck's counts with valgrind's "total heap usage" line.
 * Not linked to memcheck.  pvalloc is left out: valgrind 3.19 aborts the
 * program on it.  Everything is freed at the end.
 *
 * usage: plain_mix [ROUNDS]   (default 3000)
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

static void *slot[SLOTS];
static size_t len[SLOTS]; /* the size asked for each slot's block */

static void drop(int i)
{
	free(slot[i]);
	slot[i] = NULL;
}

/* slot i's block, n bytes, when there is one */
static void put(int i, void *p, size_t n)
{
	if (p) {
		slot[i] = p;
		len[i] = n;
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3000;
	for (long i = 0; i < rounds; i++) {
		int k = (int)((i * 7) % SLOTS);
		size_t sz = (size_t)((i * 37) % 500) + 1;
		void *p;
		switch (i % 13) {
		case 0:
			drop(k);
			put(k, malloc(sz), sz);
			break;
		case 1:
			drop(k);
			put(k, calloc(sz % 10 + 1, 8), (sz % 10 + 1) * 8);
			break;
		case 2:                                 /* grow */
			put(k, realloc(slot[k], sz * 3), sz * 3);
			break;
		case 3:                                 /* shrink */
			put(k, realloc(slot[k], sz / 4 + 1), sz / 4 + 1);
			break;
		case 4:                                 /* realloc(NULL, n) */
			drop(k);
			put(k, realloc(NULL, sz), sz);
			break;
		case 5:                                 /* realloc(p, 0) frees */
			if (slot[k]) {
				slot[k] = realloc(slot[k], 0); /* NULL under glibc */
				len[k] = 0;
			}
			break;
		case 6:
			drop(k);
			put(k, memalign(64, sz), sz);
			break;
		case 7:
			drop(k);
			if (posix_memalign(&p, 32, sz) == 0)
				put(k, p, sz);
			break;
		case 8:
			drop(k);
			put(k, aligned_alloc(16, (sz + 15) & ~(size_t)15), (sz + 15) & ~(size_t)15);
			break;
		case 9:
			drop(k);
			put(k, valloc(sz), sz);
			break;
		case 10:
			put(k, reallocarray(slot[k], sz % 20 + 1, 12), (sz % 20 + 1) * 12);
			break;
		case 11:
			drop(k);
			free(NULL);
			put(k, malloc(0), 0);
			break;
		case 12:
			drop(k);
			break;
		}
		/* a byte written where there is one: malloc(0)'s and
		 * realloc(p, 0)'s blocks have none (valgrind: invalid write) */
		if (slot[k] && len[k])
			memset(slot[k], (int)i, 1);
	}
	for (int k = 0; k < SLOTS; k++)
		drop(k);
	return 0;
}
