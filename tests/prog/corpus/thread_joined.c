/* Threads that ended: one returned a list through pthread_join, which
 * main keeps (reachable); one lost a list before it returned (lost),
 * its stack now cached by the C library with the addresses in it. */
#include <pthread.h>
#include "corpus.h"

struct node *kept;

static void *give(void *arg)
{
	(void)arg;
	return list(3);
}

static void *lose(void *arg)
{
	(void)arg;
	struct node *volatile l = list(4);
	USE(l);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	void *ret;
	pthread_create(&a, NULL, give, NULL);
	pthread_join(a, &ret);
	kept = ret;
	pthread_create(&b, NULL, lose, NULL);
	pthread_join(b, NULL);
	return 0;
}
