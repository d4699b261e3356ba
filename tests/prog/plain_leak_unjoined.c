/* Threads that ended and were never joined: glibc keeps each one's
 * stack block, its descriptor and static TLS included, on its list of
 * stacks in use until a pthread_join.  What each returned (48 B, 80 B:
 * the descriptor's result) and what its __thread variable points to
 * (64 B each) are still reachable, as valgrind reads those descriptors;
 * their DTVs possibly lost (the descriptor points one entry into each);
 * and one block lost (32 B, definite).  memcheck called all six
 * definitely lost before (roots.c, stack_lists_found). */
#include <pthread.h>
#include <unistd.h>
#include "plain_leak_common.h"
#include "proc_field.h"

static __thread void *volatile tls;

static void *worker(void *arg)
{
	tls = malloc(64);
	return malloc((size_t)arg);
}

__attribute__((noinline)) static void lose(void)
{
	void *volatile p = malloc(32);
	(void)p;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, (void *)48) || pthread_create(&t, NULL, worker, (void *)80))
		return 2;
	/* both ended (the kernel's count), neither joined */
	for (int i = 0; proc_field("/proc/self/status", "Threads:") != 1; i++)
		if (i > 10000)
			return 3;
		else
			usleep(1000);
	lose();
	scrub();
	exit(0);
}
