/*
 * plain_thread_unstarted.c - threads made just before the process ends,
 * each handed a block of its own (tests/test_threads.c): a thread not
 * yet run at the exit's scan keeps its argument in its descriptor
 * (valgrind: still reachable), not lost.
 *
 * usage: plain_thread_unstarted [N]
 *   pins itself to the processor it runs on (so that the new threads
 *   wait for it), makes N threads (default 8), each given a block of
 *   100 + i bytes it keeps while it waits, and exits at once: exit 0
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
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
		if (pthread_create(&t, NULL, keeper, block) != 0)
			return 1;
	}
	exit(0);
}
