/* Another thread keeps a list only as a pthread key's value (in its
 * thread descriptor, at the top of its stack) and blocks: still
 * reachable.  A key with many slots makes the C library allocate a
 * second-level array for it. */
#include <pthread.h>
#include <unistd.h>
#include "corpus.h"

static pthread_key_t keys[40];
static volatile int ready;

static void *worker(void *arg)
{
	(void)arg;
	pthread_setspecific(keys[1], list(2));
	pthread_setspecific(keys[39], list(3));
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 40; i++)
		pthread_key_create(&keys[i], NULL);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	exit(0);
}
