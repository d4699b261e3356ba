/*
 * threadroots.c - a region begun on one thread and ended on another
 * while the main thread holds a block in a local: the main thread's
 * stack is a root too.  Exit status 0 when the block is still reachable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <memcheck/memcheck.h>

static void *begin(void *arg)
{
	(void)arg;
	memcheck_begin("across threads");
	return NULL;
}

static void *end(void *arg)
{
	memcheck_end(arg);
	return NULL;
}

int main(void)
{
	pthread_t t;
	struct memcheck_result r;
	pthread_create(&t, NULL, begin, NULL);
	pthread_join(t, NULL);
	void *volatile held = malloc(48);
	pthread_create(&t, NULL, end, &r);
	pthread_join(t, NULL);
	int bad = r.still_reachable.blocks != 1 || r.definitely_lost.blocks != 0;
	if (bad)
		fprintf(stderr, "threadroots: still reachable %llu, definitely lost %llu; "
			"expected 1 and 0\n", (unsigned long long)r.still_reachable.blocks,
			(unsigned long long)r.definitely_lost.blocks);
	free(held);
	return bad;
}
