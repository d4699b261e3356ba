/*
 * plain_idle_threads.c - thousands of detached threads that never call
 * malloc themselves, at most 8 alive at once, then one block lost and
 * exit (issue 14, item 2).  The C library frees a dead thread's DTV and
 * dynamic TLS after the thread's key destructors have run, where
 * memcheck once took a thread slot that no destructor released, and the
 * scan at exit read the stack it had noted for that slot, long unmapped.
 *
 * usage: plain_idle_threads [N]   (N threads, default 3000)
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

static sem_t room;
static int finished;

static void *idle(void *arg)
{
	(void)arg;
	volatile unsigned spin = 0;
	for (int i = 0; i < 1000; i++)
		spin += (unsigned)i;
	__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
	sem_post(&room);
	return NULL;
}

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(77);
	(void)p;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sem_init(&room, 0, 8);
	for (int i = 0; i < n; i++) {
		while (sem_wait(&room) != 0)
			;
		pthread_t t;
		if (pthread_create(&t, &attr, idle, NULL) != 0)
			return 2;
	}
	while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < n)
		sched_yield();
	lose();
	exit(0);
}
