/*
 * plain_thread_unstarted.c - threads made just before the process ends,
 * each handed a block of its own (tests/test_threads.c): a thread not
 * yet run at the exit's scan keeps its argument in its descriptor
 * (valgrind: still reachable), not lost.
 *
 * usage: plain_thread_unstarted [N [c11]]
 *   pins itself to the processor it runs on (so that the new threads
 *   wait for it), makes N threads (default 8), each given a block of
 *   100 + i bytes it keeps while it waits, and exits at once: exit 0
 *   c11: the threads made by C11's thrd_create; first two more, joined:
 *   one returns 42, one ends by thrd_exit(7), each freeing the block it
 *   was given; prints "joined 42 7"
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

static void *keeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static int keeper_c11(void *arg)
{
	for (;;)
		pause();
	return arg != NULL;
}

static int returns_42(void *arg)
{
	free(arg);
	return 42;
}

static int exits_7(void *arg)
{
	free(arg);
	thrd_exit(7);
}

/* Two C11 threads joined, their results printed; 0, or 1 on a failure. */
static int c11_joined(void)
{
	thrd_t a, b;
	int ra = 0, rb = 0;
	if (thrd_create(&a, returns_42, malloc(10)) != thrd_success ||
	    thrd_create(&b, exits_7, malloc(20)) != thrd_success || thrd_join(a, &ra) != thrd_success ||
	    thrd_join(b, &rb) != thrd_success)
		return 1;
	printf("joined %d %d\n", ra, rb);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	bool c11 = argc > 2 && strcmp(argv[2], "c11") == 0;
	if (c11 && c11_joined() != 0)
		return 1;
	int cpu = sched_getcpu();
	if (cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof one, &one);
	}
	for (int i = 0; i < n; i++) {
		char *block = malloc(100 + (size_t)i);
		if (!block)
			return 1;
		memset(block, i, 100 + (size_t)i);
		pthread_t t;
		thrd_t t11;
		if (c11 ? thrd_create(&t11, keeper_c11, block) != thrd_success :
			  pthread_create(&t, NULL, keeper, block) != 0)
			return 1;
	}
	exit(0);
}
