/* Another thread's stack and thread-local storage: a block only a local
 * of a live, blocked thread points to (48 B), and one only its __thread
 * variable points to (96 B), both still reachable when the main thread
 * exits; and one lost (32 B, definite). */
#include <pthread.h>
#include <unistd.h>
#include "plain_leak_common.h"

static __thread void *volatile tls;
static volatile int ready;

static void *worker(void *arg)
{
	(void)arg;
	void *volatile local = malloc(48);
	tls = malloc(96);
	free(malloc(16));
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return local;
}

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(32);
	(void)p;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	lose();
	scrub();
	exit(0);
}
