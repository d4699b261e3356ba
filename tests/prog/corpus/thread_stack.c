/* A pointer only in another thread's stack, the thread blocked when
 * the process exits: still reachable (48 bytes); a block that thread
 * lost: definitely lost. */
#include <pthread.h>
#include <unistd.h>
#include "corpus.h"

static volatile int ready;

__attribute__((noinline)) static void lose(void)
{
	USE(malloc(40));
}

static void *worker(void *arg)
{
	(void)arg;
	void *volatile local = malloc(48);
	lose();
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return local;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	exit(0);
}
