/*
 * plain_scrub_pages.c - MEMCHECK_SCRUB reads no page of a block larger
 * than what it cleans whole past the one the block starts in
 * (test_leakkinds, glibc with MALLOC_MMAP_THRESHOLD_=131072: every
 * malloc(1 MiB) a fresh mapping, its first byte written, then freed).
 * Bare, a round costs one minor fault (the written page); a scrub that
 * read to 4096 bytes from the block's start (16 bytes into the mapping)
 * read the second page too, one more fault a round.  Prints "ok" when
 * the rounds averaged under 1.5 faults, else the figure; exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define ROUNDS 400

static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(void)
{
	free(malloc(1 << 20)); /* the first round's own faults left out */
	long before = faults();
	for (int i = 0; i < ROUNDS; i++) {
		volatile char *p = malloc(1 << 20);
		if (!p)
			return 1;
		p[0] = 1;
		free((void *)p);
	}
	double per = (double)(faults() - before) / ROUNDS;
	if (per < 1.5)
		puts("ok");
	else
		printf("%.2f faults a round\n", per);
	return 0;
}
