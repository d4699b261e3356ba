/* Threads that never call malloc themselves: main hands each a list and
 * forgets it; one keeps it in a local, one in a __thread variable, both
 * blocked at exit: still reachable.  A third thread is handed a list it
 * drops before blocking: lost. */
#include <pthread.h>
#include <unistd.h>
#include "corpus.h"

__thread struct node *held;
static volatile int ready;

static void *on_stack(void *arg)
{
	struct node *volatile mine = arg;
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return mine;
}

static void *in_tls(void *arg)
{
	held = arg;
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void *drops(void *arg)
{
	USE(arg);
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void *(*const fns[])(void *) = { on_stack, in_tls, drops };

__attribute__((noinline)) static void start(int i)
{
	pthread_t t;
	pthread_create(&t, NULL, fns[i], list(2 + i));
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		start(i);
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 3)
		usleep(1000);
	exit(0);
}
