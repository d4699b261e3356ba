/*
 * plain_exit_churn.c - the process exits while its other threads still
 * allocate and free (tests/test_exitrace.c).
 *
 *   plain_exit_churn [THREADS]      (run it preloaded)
 *
 * THREADS threads (default 3) each keep a ring of 32 blocks of 1..512
 * bytes, replacing one with a new block at each step, by malloc or by
 * calloc, for ever.  main waits until every thread has gone round its
 * ring twice, leaves one block reachable from a global and one lost,
 * and returns while the threads run.  The exit's record is made while
 * they still allocate: its figures (the counts, the blocks in use and
 * their kinds) must all be those of one moment, as valgrind's are
 * (it stops every thread): in use == allocated - freed, the kinds'
 * sum == in use.  Prints nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RING 32
#define MAX_THREADS 16

static _Atomic int warm;
static void *volatile kept;

static void *churn(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
	void *ring[RING] = { 0 };
	for (unsigned long i = 0;; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		size_t n = 1 + x % 512;
		unsigned k = i % RING;
		free(ring[k]);
		ring[k] = (x & 1) ? calloc(1, n) : malloc(n);
		if (ring[k])
			*(volatile char *)ring[k] = 1;
		if (i == 2 * RING)
			atomic_fetch_add(&warm, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	if (n < 1 || n > MAX_THREADS)
		n = 3;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, churn, (void *)(uintptr_t)(i + 1)) != 0)
			return 2;
	}
	while (atomic_load(&warm) < n)
		;
	kept = malloc(100);
	char *lost = malloc(77);
	if (lost)
		memset(lost, 'x', 77);
	lost = NULL;
	return 0;
}
