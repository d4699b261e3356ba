/*
 * plain_thread_rounds.c - rounds of threads that allocate and free, each
 * round's threads created after the last round's were joined, so the C
 * library reuses their stacks (and frees what it kept with them: the
 * dynamic TLS blocks of libraries loaded with dlopen, libunwind's among
 * them when memcheck unwinds with it).  Preloaded only, never linked to
 * memcheck; no output.
 *
 * usage: plain_thread_rounds [ROUNDS [PER_THREAD]]  (10, 2000): every
 * block freed, 4 threads a round; exit 0.
 */
#include <pthread.h>
#include <stdlib.h>

#define NTHREADS 4

static long per_thread = 2000;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++) {
		void *volatile p = malloc(16 + (size_t)(i % 200));
		if (!p)
			return (void *)1;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	if (argc > 2)
		per_thread = atol(argv[2]);
	for (long r = 0; r < rounds; r++) {
		pthread_t t[NTHREADS];
		for (int i = 0; i < NTHREADS; i++)
			if (pthread_create(&t[i], NULL, work, NULL))
				return 1;
		for (int i = 0; i < NTHREADS; i++) {
			void *ret;
			if (pthread_join(t[i], &ret) || ret)
				return 1;
		}
	}
	return 0;
}
