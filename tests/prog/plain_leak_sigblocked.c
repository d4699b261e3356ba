/* A thread that blocks every signal (as userspace-rcu's call_rcu worker,
 * which its creator starts with all signals blocked) and never
 * allocates, running at the exit (no call, no system call), keeping the
 * only pointer to a block, 8 bytes into it, in a local: valgrind reads
 * its stack and finds the block possibly lost.  memcheck cannot stop
 * such a thread (its stop signal stays pending) and, with no system
 * call to give its stack pointer and no slot (it never allocated) to
 * give its stack, read none of its stack: the block definitely lost
 * (urcu's test_urcu_fork: a forked process's node, which the worker had
 * spliced into a list on its stack, definitely lost in 1 process of 300
 * under tcmalloc). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "plain_leak_common.h"

static atomic_int ready;
static atomic_ulong spins;
static char *volatile handed;

static void *worker(void *arg)
{
	(void)arg;
	char *volatile inner = handed; /* 8 bytes into the block */
	handed = NULL;
	atomic_fetch_add(&ready, 1);
	for (;;)
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
	return inner;
}

int main(void)
{
	char *b = malloc(48);
	memset(b, 0, 48);
	handed = b + 8;
	b = NULL;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (atomic_load(&ready) < 1)
		usleep(1000);
	scrub();
	return 0;
}
