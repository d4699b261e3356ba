/* Signal handlers on alternate stacks the program maps, each stack
 * later replaced: a handler's deeper call allocates a list, keeps it
 * only in a local and returns, so the frame dies on the alternate
 * stack, whose memory stays mapped.  valgrind marks a dead frame's
 * memory inaccessible and never reads it: every such list is lost.
 * The main thread's first stack replaced by a second; a thread's stack
 * kept in a pool after the thread ended; and a stack unmapped once its
 * handler ran, whose address a mapping of data then takes (a block only
 * that data points to: still reachable).  The last stack is malloc'd
 * and kept by a global (reachable). */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include "corpus.h"

#define SIZE (1 << 16)

void *alt_block, *pool[2];
void **data;

__attribute__((noinline)) static void lose_here(void)
{
	struct node *volatile p = list(2);
	USE(p);
}

static void handler(int sig)
{
	(void)sig;
	lose_here();
}

/* The calling thread's alternate stack set to base, a handler run. */
static void run_on(void *base)
{
	stack_t ss = { .ss_sp = base, .ss_size = SIZE, .ss_flags = 0 };
	if (sigaltstack(&ss, NULL))
		_exit(2);
	raise(SIGUSR1);
}

static void *thread(void *arg)
{
	run_on(arg);
	return NULL;
}

int main(void)
{
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = handler, .sa_flags = SA_ONSTACK }, NULL);
	run_on(pool[0] = map_or_die(SIZE));
	pool[1] = map_or_die(SIZE);
	pthread_t t;
	if (pthread_create(&t, NULL, thread, pool[1]) || pthread_join(t, NULL))
		return 2;
	void *gone = map_or_die(SIZE);
	run_on(gone);
	run_on(alt_block = malloc(SIZE));
	munmap(gone, SIZE);
	data = mmap(gone, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		    -1, 0);
	if (data == MAP_FAILED)
		return 2;
	data[SIZE / 2 / sizeof *data] = malloc(48);
	return 0;
}
