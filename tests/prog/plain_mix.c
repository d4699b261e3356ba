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

static void drop(int i)
{
	free(slot[i]);
	slot[i] = NULL;
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
			slot[k] = malloc(sz);
			break;
		case 1:
			drop(k);
			slot[k] = calloc(sz % 10 + 1, 8);
			break;
		case 2:                                 /* grow */
			p = realloc(slot[k], sz * 3);
			if (p)
				slot[k] = p;
			break;
		case 3:                                 /* shrink */
			p = realloc(slot[k], sz / 4 + 1);
			if (p)
				slot[k] = p;
			break;
		case 4:                                 /* realloc(NULL, n) */
			drop(k);
			slot[k] = realloc(NULL, sz);
			break;
		case 5:                                 /* realloc(p, 0) frees */
			if (slot[k]) {
				p = realloc(slot[k], 0);
				slot[k] = p;            /* NULL under glibc */
			}
			break;
		case 6:
			drop(k);
			slot[k] = memalign(64, sz);
			break;
		case 7:
			drop(k);
			if (posix_memalign(&p, 32, sz) == 0)
				slot[k] = p;
			break;
		case 8:
			drop(k);
			slot[k] = aligned_alloc(16, (sz + 15) & ~(size_t)15);
			break;
		case 9:
			drop(k);
			slot[k] = valloc(sz);
			break;
		case 10:
			p = reallocarray(slot[k], sz % 20 + 1, 12);
			if (p)
				slot[k] = p;
			break;
		case 11:
			drop(k);
			free(NULL);
			slot[k] = malloc(0);
			break;
		case 12:
			drop(k);
			break;
		}
		if (slot[k])
			memset(slot[k], (int)i, 1);
	}
	for (int k = 0; k < SLOTS; k++)
		drop(k);
	return 0;
}
