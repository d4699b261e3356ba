/* A thread that blocks every signal (as userspace-rcu's call_rcu
 * worker) and allocates and frees in a loop at the exit, keeping the
 * only pointer to a block 8 bytes into it in a live local, where a call
 * that returned long before left the block's start on its dead frame,
 * far below: valgrind reads the thread from its stack pointer up and
 * finds the block possibly lost.  memcheck cannot stop such a thread
 * (its stop signal stays pending); during the exit's scan it spins in
 * memcheck's malloc or free for the block table's lock, running, so no
 * system call gives its stack pointer, and its whole stack was read:
 * the dead frame made the block still reachable (urcu's test_urcu_fork:
 * the worker freeing a node at a forked child's exit).  What the loop
 * has in flight at the exit (one 32-byte block or none) may be still
 * reachable, under valgrind as under memcheck. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define PLAIN_LEAK_HANDOFF
#include "plain_leak_common.h"

static char *volatile start_once;

/* The block's start left in the deepest of five 4 KiB frames, handed
 * through a global (an argument would leave copies in every frame's
 * saved registers, near the top). */
__attribute__((noinline)) static void deep(int n)
{
	volatile uintptr_t pad[512];
	pad[0] = 0;
	if (n)
		deep(n - 1);
	else
		for (int i = 0; i < 4; i++)
			pad[i * 100] = (uintptr_t)start_once;
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	char *volatile inner = take_block(); /* 8 bytes into the block */
	deep(4);
	start_once = NULL;
	atomic_fetch_add(&ready, 1);
	for (;;) {
		char *volatile q = malloc(32);
		free(q);
	}
	return inner;
}

int main(void)
{
	start_once = hand_block();
	/* every signal blocked from the thread's start (glibc 2.32's
	 * attribute: the mask its creator would otherwise set around the
	 * call) */
	pthread_attr_t attr;
	sigset_t all;
	pthread_t t;
	sigfillset(&all);
	if (pthread_attr_init(&attr) || pthread_attr_setsigmask_np(&attr, &all) ||
	    pthread_create(&t, &attr, worker, NULL))
		return 2;
	pthread_attr_destroy(&attr);
	wait_taken();
	scrub();
	return 0;
}
