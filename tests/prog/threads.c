/*
 * threads.c - 4 threads x N allocations (sizes 1..64), each frees the
 * even-numbered half of its own blocks, all inside one region "threads".
 * Threads 0 and 1 exit (and are joined) before the region ends; threads
 * 2 and 3 are still alive, parked on a barrier, when it ends.  The
 * threads are created before the region begins and wait for it on a
 * barrier: pthread_create's own allocations (the DTV, through ld.so's
 * malloc) are then not the region's, and its figures are exact.  The
 * program checks the region's figures itself ("threads: FIGURE = GOT,
 * expected WANT" on stderr); exit status: the number of wrong figures.
 *
 * usage: threads [N [count-only]]   (N default 100000; count-only: run
 *        with MEMCHECK_TRACK=0, which measures no freed or live bytes)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

#define NTHREADS 4

static long per_thread = 100000;
static pthread_barrier_t region_begun, done_work, region_ended;
static void **blocks[NTHREADS];
static int failures;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		fprintf(stderr, "threads: %s = %llu, expected %llu\n", what,
			(unsigned long long)got, (unsigned long long)want);
		failures++;
	}
}

static size_t size_of(long i)
{
	return (size_t)(i % 64) + 1;
}

static void *work(void *arg)
{
	int t = (int)(intptr_t)arg;
	void **v = blocks[t];
	pthread_barrier_wait(&region_begun);
	for (long i = 0; i < per_thread; i++)
		v[i] = malloc(size_of(i));
	for (long i = 0; i < per_thread; i += 2) {
		free(v[i]);
		v[i] = NULL;
	}
	if (t >= 2) {
		/* still alive while the region ends */
		pthread_barrier_wait(&done_work);
		pthread_barrier_wait(&region_ended);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_thread = atol(argv[1]);
	int count_only = argc > 2 && strcmp(argv[2], "count-only") == 0;
	pthread_t th[NTHREADS];
	/* the pointer arrays are not the region's */
	for (int t = 0; t < NTHREADS; t++)
		blocks[t] = calloc((size_t)per_thread, sizeof(void *));
	pthread_barrier_init(&region_begun, NULL, NTHREADS + 1);
	pthread_barrier_init(&done_work, NULL, 3);
	pthread_barrier_init(&region_ended, NULL, 3);
	for (int t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, work, (void *)(intptr_t)t);

	memcheck_begin("threads");
	pthread_barrier_wait(&region_begun);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	pthread_barrier_wait(&done_work);
	struct memcheck_result r;
	memcheck_end(&r);
	pthread_barrier_wait(&region_ended);
	pthread_join(th[2], NULL);
	pthread_join(th[3], NULL);

	uint64_t bytes = 0, freed = 0, live = 0;
	for (long i = 0; i < per_thread; i++) {
		bytes += size_of(i);
		if (i % 2 == 0)
			freed += size_of(i);
		else
			live += size_of(i);
	}
	uint64_t n = (uint64_t)per_thread, halves = (n + 1) / 2;
	expect("allocs", r.allocs, NTHREADS * n);
	expect("frees", r.frees, NTHREADS * halves);
	expect("bytes_allocated", r.bytes_allocated, NTHREADS * bytes);
	expect("live_blocks", r.live_blocks, NTHREADS * (n - halves));
	if (!count_only) {
		expect("bytes_freed", r.bytes_freed, NTHREADS * freed);
		expect("live_bytes", r.live_bytes, NTHREADS * live);
	}

	for (int t = 0; t < NTHREADS; t++) {
		for (long i = 0; i < per_thread; i++)
			free(blocks[t][i]);
		free(blocks[t]);
	}
	return failures > 100 ? 100 : failures;
}
