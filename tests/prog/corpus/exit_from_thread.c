/* exit() called from another thread while main waits in pthread_join
 * with a block in its frame: main's stack is a root (reachable); the
 * exiting thread's dead frames held a lost list. */
#include <pthread.h>
#include "corpus.h"

__attribute__((noinline)) static void lose(void)
{
	USE(list(3));
}

static void *quit(void *arg)
{
	(void)arg;
	lose();
	exit(0);
}

int main(void)
{
	struct node *volatile mine = list(2);
	pthread_t t;
	pthread_create(&t, NULL, quit, NULL);
	pthread_join(t, NULL);
	USE(mine);
	return 0;
}
