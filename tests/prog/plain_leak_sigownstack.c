/* A thread on a stack of the program's own (pthread_attr_setstack, a
 * mapping it made), every signal blocked, waiting in a system call at
 * the exit (or, with "spin", computing), the only pointer to a block 8
 * bytes into it in a local: valgrind finds the block and the thread's
 * DTV possibly lost.  memcheck cannot stop the thread, and the C
 * library keeps its descriptor on its list of the program's stacks
 * (_dl_stack_user), which memcheck does not look the thread up on; the
 * stack is a mapping of the program's (mmap), a root whole, with the
 * descriptor at its top: the same kinds (main too, four allocators). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PLAIN_LEAK_HANDOFF
#include "plain_leak_common.h"

#define STACK_SIZE (256 << 10)

static atomic_ulong spins;
static int spin; /* argv[1] "spin": computes, no system call */

static void *worker(void *arg)
{
	(void)arg;
	char *volatile inner = take_block(); /* 8 bytes into the block */
	atomic_fetch_add(&ready, 1);
	for (;;)
		if (spin)
			atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
		else
			pause(); /* every signal blocked: never returns */
	return inner;
}

int main(int argc, char **argv)
{
	spin = argc > 1 && !strcmp(argv[1], "spin");
	hand_block();
	void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	pthread_attr_t attr;
	sigset_t all;
	pthread_t t;
	sigfillset(&all);
	if (stack == MAP_FAILED || pthread_attr_init(&attr) ||
	    pthread_attr_setstack(&attr, stack, STACK_SIZE) ||
	    pthread_attr_setsigmask_np(&attr, &all) || pthread_create(&t, &attr, worker, NULL))
		return 2;
	pthread_attr_destroy(&attr);
	wait_taken();
	usleep(20000); /* the thread in pause */
	scrub();
	return 0;
}
