/*
 * plain_scrub.c - MEMCHECK_SCRUB=N word by word (test_leakkinds).
 *
 *   plain_scrub N [SIZE [J]] (run with MEMCHECK_SCRUB=N; prints "ok")
 *
 * Seven blocks of SIZE bytes (200 by default, 16 to 4096) are filled
 * with words on both sides of the bounds of what holds an address (4096 <= w < 2^48), freed, and taken
 * back by later mallocs of the same size (at once from a thread cache,
 * or after a page's fresh blocks under mimalloc).  In each, of the first
 * N bytes, every word that held an address must be 0 and every other
 * word as it was; past N, every word as it was.  The first two words are
 * the allocators' own on free (a free-list link, glibc's tcache key): of
 * those only that none holds an address within N.  Seven: glibc's tcache
 * keeps seven blocks of a size, so no block is merged with a neighbour
 * (which would write further words).  Exits 1 naming the first wrong
 * word.
 *
 * With J (2 <= J < SIZE / 8), every word but word J is 0 and word J
 * holds one of seven values, five of them addresses: a scrub that tests
 * a block's words in steps must find an address that is alone in its
 * step (account.c's scrub_fixed: the later steps' masks joined).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 7
#define MAX_TRIES 100000

#define IS_ADDR(w) ((w) - 4096 < ((uint64_t)1 << 48) - 4096)

static const uint64_t pattern[] = {
	4095, 4096, 0xffffffffffff, UINT64_C(0x1000000000000), 0, 0xdeadbeef,
	UINT64_MAX, UINT64_C(0x8000000000000000), UINT64_C(0x7fffffffffffffff),
	UINT64_C(0x800000000000), UINT64_C(0x7fffffffffff), 1, UINT64_C(0xffff000000001000),
	UINT64_C(0x55555555a000), 4097, UINT64_C(0x00ff00ff00ff00ff),
};
#define NPAT (sizeof pattern / sizeof pattern[0])

/* One word's values, block by block (J given): five addresses, two not. */
static const uint64_t alone[] = {
	UINT64_C(0x55555555a000), 4096, 0xffffffffffff, 4095, UINT64_C(0x7fffffffffff),
	UINT64_C(0x1000000000000), 4097,
};
static int only = -1; /* J, or -1 */

/* Word i of block k as filled: each block's words in another order, so
 * that every value falls on both sides of N. */
static uint64_t filled(int k, int i)
{
	if (only >= 0)
		return i == only ? alone[k] : 0;
	return pattern[(size_t)(i * 5 + k * 3) % NPAT];
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4)
		return 2;
	long n = strtol(argv[1], NULL, 10);
	long size = argc >= 3 ? strtol(argv[2], NULL, 10) : 200;
	if (size < 16 || size > 4096)
		return 2;
	int words = (int)(size / 8);
	if (argc == 4)
		only = (int)strtol(argv[3], NULL, 10);
	if (argc == 4 && (only < 2 || only >= words))
		return 2;
	int lim = (int)((n < size ? n : size) / 8); /* words scrubbed */
	uint64_t *mine[BLOCKS];
	for (int k = 0; k < BLOCKS; k++) {
		mine[k] = malloc((size_t)size);
		if (!mine[k])
			return 2;
		for (int i = 0; i < words; i++)
			mine[k][i] = filled(k, i);
	}
	for (int k = BLOCKS - 1; k >= 0; k--)
		free(mine[k]);

	static uint64_t *taken[MAX_TRIES];
	int ntaken = 0, seen = 0, bad = 0;
	while (seen < BLOCKS && ntaken < MAX_TRIES) {
		uint64_t *p = taken[ntaken++] = malloc((size_t)size);
		if (!p)
			return 2;
		int k = 0;
		while (k < BLOCKS && mine[k] != p)
			k++;
		if (k == BLOCKS)
			continue;
		seen++;
		for (int i = 0; i < words && !bad; i++) {
			uint64_t was = filled(k, i), now = p[i];
			if (i < 2) {
				if (i < lim && IS_ADDR(now)) {
					fprintf(stderr, "block %d word %d: %#llx, an address, left (N %ld)\n",
						k, i, (unsigned long long)now, n);
					bad = 1;
				}
				continue;
			}
			uint64_t want = i < lim && IS_ADDR(was) ? 0 : was;
			if (now != want) {
				fprintf(stderr, "block %d word %d: %#llx, want %#llx (was %#llx, N %ld)\n",
					k, i, (unsigned long long)now, (unsigned long long)want,
					(unsigned long long)was, n);
				bad = 1;
			}
		}
	}
	for (int t = 0; t < ntaken; t++)
		free(taken[t]);
	if (seen < BLOCKS) {
		fprintf(stderr, "only %d of the %d freed blocks came back in %d mallocs\n", seen,
			BLOCKS, ntaken);
		return 1;
	}
	if (bad)
		return 1;
	puts("ok");
	return 0;
}
