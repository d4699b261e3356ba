/*
 * plain_peak.c - a program whose peak of live bytes is known site by
 * site, for the peak snapshot, the timeline and their exports
 * (tests/test_pictures.c), under the preload and under valgrind's massif.
 *
 *   plain_peak [ROUNDS]
 *
 * keep_a keeps 40 blocks of 1,000 bytes; burst_b adds 10 of 3,000 and
 * frees them; grow_c adds 5 of 5,000 and frees them.  The peak, 70,000
 * bytes, is at the end of burst_b: keep_a 40,000 in 40 blocks, burst_b
 * 30,000 in 10.  Then ROUNDS (default 0) rounds of churn, 64 blocks of
 * 256 bytes made and freed each round (56,384 live at most: never the
 * peak), for a timeline with many samples.  Everything is freed at the
 * end.  Nothing on stdout.
 */
#include <stdlib.h>
#include <string.h>

static void *blocks_a[40], *blocks_b[10], *blocks_c[5];

static __attribute__((noinline)) void keep_a(void)
{
	for (int i = 0; i < 40; i++)
		memset(blocks_a[i] = malloc(1000), 1, 1000);
}

static __attribute__((noinline)) void burst_b(void)
{
	for (int i = 0; i < 10; i++)
		memset(blocks_b[i] = malloc(3000), 2, 3000);
	for (int i = 0; i < 10; i++)
		free(blocks_b[i]);
}

static __attribute__((noinline)) void grow_c(void)
{
	for (int i = 0; i < 5; i++)
		memset(blocks_c[i] = malloc(5000), 3, 5000);
	for (int i = 0; i < 5; i++)
		free(blocks_c[i]);
}

static __attribute__((noinline)) void churn(long rounds)
{
	void *v[64];
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 64; i++)
			memset(v[i] = malloc(256), 4, 256);
		for (int i = 0; i < 64; i++)
			free(v[i]);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 0;
	keep_a();
	burst_b();
	grow_c();
	churn(rounds);
	for (int i = 0; i < 40; i++)
		free(blocks_a[i]);
	return 0;
}
