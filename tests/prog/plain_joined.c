/*
 * plain_joined.c - threads that ran at once, all joined before the
 * process exits: glibc keeps their stacks for reuse (its stack cache),
 * each with the thread's descriptor, which still points into the
 * thread's DTV, a block of malloc's.  valgrind reads that memory:
 * the DTVs are possibly lost (an interior pointer), not definitely
 * (tests/test_valgrind.c, joined_threads_as_valgrinds).  Each thread
 * also leaks one block, definitely lost whatever the cache holds.
 *
 * Usage: plain_joined [threads].  Exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *run(void *arg)
{
	char *p = malloc(40 + (size_t)(uintptr_t)arg);
	if (p)
		memset(p, 1, 40);
	p = NULL;
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	if (n < 1 || n > 64)
		return 2;
	pthread_t t[64];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
