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

#define PLAIN_LEAK_HANDOFF
#include "plain_leak_common.h"

static atomic_ulong spins;

static void *worker(void *arg)
{
	(void)arg;
	char *volatile inner = take_block(); /* 8 bytes into the block */
	atomic_fetch_add(&ready, 1);
	for (;;)
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
	return inner;
}

int main(void)
{
	hand_block();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	wait_taken();
	scrub();
	return 0;
}
