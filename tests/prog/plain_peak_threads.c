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
 *   plain_peak_threads handoff
 *
 * handoff: the threads leave their blocks to main, which frees them
 * after the joins (frees of blocks other threads allocated: each
 * thread's share of their site's count, in its shard (snapshot.c), rises
 * by what main's falls) and then makes a higher peak: its 8 MB and 13 MB
 * more in 1300 blocks from again(), with nothing of work() left live.
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

#define AGAIN_BLOCKS 1300

static pthread_barrier_t all_hold;
static int handoff;
static void *handed[NTHREADS][THREAD_BLOCKS];

static void *work(void *arg)
{
	void **v = handed[(long)arg];
	for (int i = 0; i < THREAD_BLOCKS; i++) {
		v[i] = malloc(THREAD_SIZE);
		memset(v[i], 1, THREAD_SIZE);
	}
	pthread_barrier_wait(&all_hold);
	for (int i = 0; i < THREAD_BLOCKS && !handoff; i++)
		free(v[i]);
	return arg;
}

/* handoff's second, higher peak, from a site of its own. */
static __attribute__((noinline)) void again(void)
{
	static void *v[AGAIN_BLOCKS];
	for (int i = 0; i < AGAIN_BLOCKS; i++) {
		v[i] = malloc(THREAD_SIZE);
		memset(v[i], 1, THREAD_SIZE);
	}
	for (int i = 0; i < AGAIN_BLOCKS; i++)
		free(v[i]);
}

int main(int argc, char **argv)
{
	static void *kept[MAIN_BLOCKS];
	handoff = argc > 1 && !strcmp(argv[1], "handoff");
	for (int i = 0; i < MAIN_BLOCKS; i++) {
		kept[i] = malloc(MAIN_SIZE);
		memset(kept[i], 1, MAIN_SIZE);
	}
	pthread_barrier_init(&all_hold, NULL, NTHREADS);
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(long)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_hold);
	if (handoff) {
		for (int i = 0; i < NTHREADS; i++)
			for (int j = 0; j < THREAD_BLOCKS; j++)
				free(handed[i][j]);
		again();
	}
	for (int i = 0; i < MAIN_BLOCKS; i++)
		free(kept[i]);
	printf("peak_at_least=%d\n", MAIN_BLOCKS * MAIN_SIZE + NTHREADS * THREAD_BLOCKS * THREAD_SIZE);
	return 0;
}
