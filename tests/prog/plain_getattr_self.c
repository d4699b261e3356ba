/*
 * plain_getattr_self - threads whose first allocation is the C library's
 * own, made inside pthread_getattr_np on the calling thread: glibc (2.36)
 * holds the thread's lock while it reallocs the CPU set it asks the
 * kernel for.  libuv's test thread_stack_size does this (the thread's
 * stack size, checked against the rlimit), as do runtimes that find
 * their guard page at a thread's start.  Each thread then leaves a block
 * from two frames deep; the main thread frees all but the last.
 *
 * usage: plain_getattr_self [THREADS]   prints "stacks ok", exits 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *leave_block(void)
{
	char *p = malloc(33);
	if (p)
		memset(p, 'x', 33);
	return p;
}

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_attr_t attr;
	void *addr;
	size_t size;
	char here;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		exit(2);
	if (pthread_attr_getstack(&attr, &addr, &size) != 0)
		exit(3);
	pthread_attr_destroy(&attr);
	if (&here < (char *)addr || &here >= (char *)addr + size)
		exit(4);
	return leave_block();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	void *kept = NULL;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		/* the default size, then a smaller and a larger one */
		if (i % 3)
			pthread_attr_setstacksize(&attr, i % 3 == 1 ? 256 << 10 : 8 << 20);
		if (pthread_create(&t, &attr, thread_main, NULL) != 0)
			return 5;
		pthread_attr_destroy(&attr);
		free(kept);
		if (pthread_join(t, &kept) != 0 || !kept)
			return 6;
	}
	kept = NULL; /* the last thread's block: definitely lost */
	puts("stacks ok");
	return 0;
}
