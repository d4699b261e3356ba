/* A thread made by a raw clone(2) on a stack the program mapped, every
 * signal blocked (inherited from its creator), computing at the exit
 * (no call, no system call: it shares its creator's thread pointer, so
 * it must not touch the C library), the only pointer to a block 8 bytes
 * into it in a local: valgrind reads its stack from its stack pointer
 * and finds the block possibly lost.  memcheck cannot stop it, and no
 * list of the C library's has it (no descriptor, no DTV); its stack is
 * a mapping of the program's (mmap), a root whole: the same kind. */
#include <sched.h>
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

static int worker(void *arg)
{
	(void)arg;
	char *volatile inner = take_block(); /* 8 bytes into the block */
	atomic_fetch_add(&ready, 1);
	for (;;)
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
	return inner != NULL;
}

int main(void)
{
	hand_block();
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (stack == MAP_FAILED)
		return 2;
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	int tid = clone(worker, stack + STACK_SIZE,
			CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				CLONE_SYSVSEM,
			NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (tid < 0)
		return 2;
	wait_taken();
	scrub();
	return 0;
}
