/*
 * plain_leak_altstack.c - a signal handler that loses a block it
 * allocated, run on the thread's stack or on the program's alternate
 * stack (sigaltstack, SA_ONSTACK) (preloaded only, never linked to
 * memcheck; no stdio; tests/test_valgrind.c).
 *
 * Usage: plain_leak_altstack none|onstack|bss|heap|thread|freed|reused|segv.
 * "segv": as "none", then the handler writes to address 8: the process
 * dies of SIGSEGV in the handler, valgrind's "Process terminating"
 * stack the handler, the signal return, __pthread_kill_implementation,
 * handle_on, main.
 * "none": on the thread's own stack; under valgrind the lost block's
 * stack is malloc, on_usr1, then the C library's signal return (obj:
 * libc), __pthread_kill_implementation, handle_on, main: memcheck's
 * trampoline (lib/signals.c) must not show between them, or a
 * suppression written as valgrind shows the stack misses it.
 * "onstack": SA_ONSTACK with no alternate stack of the program's: bare,
 * and under valgrind, on the thread's stack as "none" (under memcheck
 * the kernel puts it on memcheck's own, and lib/fatal.c runs it on the
 * thread's stack).  Else
 * the alternate stack is a buffer in .bss, a block the program keeps (a
 * global points to it), or, for "thread", a .bss buffer of a second
 * thread's, which raises the signal and then waits in pause() while
 * main exits; for "freed", a block the program frees after the handler
 * ran without disabling the stack, and then allocates a block of the
 * stack's size that holds the only pointer to another (glibc puts it
 * where the stack was: it is the program's data, and what it points to
 * is still reachable, no false leak); for "reused", the same from one
 * call path: the stack's block and the data block after it made by
 * the same call of the same function, of the same size, so that only
 * their times tell them apart (it prints "reused" where the allocator
 * gave the data the stack's address: glibc, jemalloc, tcmalloc).  The
 * handler
 * allocates 48 bytes, fills them and drops the pointer, and keeps 32
 * bytes in a global.  Its frame, once it returned, lies below the
 * stack pointer: valgrind finds the words there undefined and skips
 * them, and says 48 bytes definitely lost, 32 (and, "heap", the stack's
 * block) still reachable.  memcheck read the dead frame as part of
 * the .bss or of the block, and found the lost block still reachable.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "plain_leak_common.h"

#define ALT (64 * 1024)

static char alt_bss[ALT] __attribute__((aligned(16)));
void *alt_heap;
void *kept;
void **holder;
static pthread_barrier_t raised;

static volatile int crash;

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	void *lost = malloc(48);
	memset(lost, 1, 48);
	kept = malloc(32);
	if (crash)
		*(volatile int *)8 = 1;
	__asm__ volatile("" : : "r"(lost) : "memory"); /* the only copy dies here */
}

/* The handler installed, on stack if not NULL (SA_ONSTACK also where
 * onstack), and the signal raised. */
static int handle_with(void *stack, bool onstack)
{
	stack_t ss = { .ss_sp = stack, .ss_size = ALT };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = stack || onstack ? SA_ONSTACK : 0;
	if ((stack && sigaltstack(&ss, NULL) != 0) || sigaction(SIGUSR1, &sa, NULL) != 0)
		return -1;
	return pthread_kill(pthread_self(), SIGUSR1) != 0 ? -1 : 0;
}

static int handle_on(void *stack)
{
	return handle_with(stack, false);
}

static void *second(void *arg)
{
	(void)arg;
	if (handle_on(alt_bss) != 0)
		_exit(1);
	scrub();
	pthread_barrier_wait(&raised);
	for (;;)
		pause();
	return NULL;
}

/* One call site for both blocks of "reused": one allocation stack. */
static __attribute__((noinline)) void *block_of_stack_size(void)
{
	return malloc(ALT);
}

static int reused(void)
{
	void *first = NULL;
	for (int round = 0; round < 2; round++) {
		void *b = block_of_stack_size();
		if (!round) {
			if (handle_on(first = b) != 0)
				return 1;
			free(b);
			continue;
		}
		holder = b;
		memset(holder, 0, ALT);
		holder[0] = malloc(40);
		memset(holder[0], 3, 40);
	}
	if ((void *)holder == first)
		write(1, "reused\n", 7);
	scrub();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "thread")) {
		pthread_t t;
		pthread_barrier_init(&raised, NULL, 2);
		if (pthread_create(&t, NULL, second, NULL) != 0)
			return 1;
		pthread_barrier_wait(&raised);
		return 0;
	}
	void *stack = alt_bss;
	if (!strcmp(argv[1], "reused"))
		return reused();
	if (!strcmp(argv[1], "freed")) {
		if (handle_on(stack = malloc(ALT)) != 0)
			return 1;
		free(stack);
		holder = malloc(ALT);
		memset(holder, 0, ALT);
		holder[0] = malloc(40);
		memset(holder[0], 3, 40);
		scrub();
		return 0;
	}
	if (!strcmp(argv[1], "heap"))
		stack = alt_heap = malloc(ALT);
	else if (!strcmp(argv[1], "none") || !strcmp(argv[1], "onstack") ||
		 (crash = !strcmp(argv[1], "segv")))
		stack = NULL;
	else if (strcmp(argv[1], "bss"))
		return 2;
	if (handle_with(stack, !strcmp(argv[1], "onstack")) != 0)
		return 1;
	scrub();
	return 0;
}
