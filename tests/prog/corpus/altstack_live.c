/* Alternate stacks the program maps: the main thread's, a handler's
 * dead frame on it holding a list, disabled since (SS_DISABLE: lost, as
 * valgrind, which never reads a returned handler's frames again); and a
 * thread's, its handler blocked on it at exit with a list in its live
 * frame (still reachable: a stack a thread runs on is read). */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include "corpus.h"

#define SIZE (1 << 16)

void *stacks[2];
static volatile int state;

__attribute__((noinline)) static void lose_here(void)
{
	struct node *volatile p = list(2);
	USE(p);
}

static void handler(int sig)
{
	(void)sig;
	if (state == 1) {
		struct node *volatile keep = list(3);
		state = 2;
		for (;;) {
			pause();
			USE(keep);
		}
	}
	lose_here();
}

static void *thread(void *arg)
{
	if (sigaltstack(&(stack_t){ .ss_sp = arg, .ss_size = SIZE }, NULL))
		_exit(2);
	state = 1;
	raise(SIGUSR1);
	return NULL;
}

int main(void)
{
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = handler, .sa_flags = SA_ONSTACK }, NULL);
	if (sigaltstack(&(stack_t){ .ss_sp = stacks[0] = map_or_die(SIZE), .ss_size = SIZE }, NULL))
		return 2;
	raise(SIGUSR1);
	sigaltstack(&(stack_t){ .ss_flags = SS_DISABLE }, NULL);
	pthread_t t;
	pthread_create(&t, NULL, thread, stacks[1] = map_or_die(SIZE));
	while (state != 2)
		usleep(1000);
	usleep(10000);
	exit(0);
}
