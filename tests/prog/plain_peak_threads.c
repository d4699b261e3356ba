/*
 * plain_peak_threads.c - a joint peak of live bytes while the thread
 * that made most of them waits: main keeps 8 MB in 1000 blocks, then
 * NTHREADS threads each allocate 1 MB in 100 blocks, all hold them at
 * once (a barrier), and free them, while main waits in pthread_join.
 * The process's peak of live bytes is at least 12 MB (the program prints
 * what it allocated itself: "peak_at_least=N"); a peak made of
 * per-thread batches missed main's 8 MB here.
 *
 *   plain_peak_threads      (run it preloaded)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define MAIN_BLOCKS 1000
#define MAIN_SIZE 8000
#define THREAD_BLOCKS 100
#define THREAD_SIZE 10000

static pthread_barrier_t all_hold;

static void *work(void *arg)
{
	void *v[THREAD_BLOCKS];
	for (int i = 0; i < THREAD_BLOCKS; i++) {
		v[i] = malloc(THREAD_SIZE);
		memset(v[i], 1, THREAD_SIZE);
	}
	pthread_barrier_wait(&all_hold);
	for (int i = 0; i < THREAD_BLOCKS; i++)
		free(v[i]);
	return arg;
}

int main(void)
{
	static void *kept[MAIN_BLOCKS];
	for (int i = 0; i < MAIN_BLOCKS; i++) {
		kept[i] = malloc(MAIN_SIZE);
		memset(kept[i], 1, MAIN_SIZE);
	}
	pthread_barrier_init(&all_hold, NULL, NTHREADS);
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_hold);
	for (int i = 0; i < MAIN_BLOCKS; i++)
		free(kept[i]);
	printf("peak_at_least=%d\n", MAIN_BLOCKS * MAIN_SIZE + NTHREADS * THREAD_BLOCKS * THREAD_SIZE);
	return 0;
}
