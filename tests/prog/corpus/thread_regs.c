/* Pointers only in other threads' registers: one thread spins with a
 * list's head in a register, another blocks in a system call with one
 * in a callee-saved register.  valgrind scans every thread's registers:
 * still reachable. */
#include <pthread.h>
#include <unistd.h>
#include "corpus.h"

static volatile int ready;

static void *spinner(void *arg)
{
	(void)arg;
	register struct node *l __asm__("r12") = list(3);
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		__asm__ volatile("" : "+r"(l));
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	register struct node *l __asm__("r13") = list(2);
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		__asm__ volatile("" : "+r"(l));
		pause();
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, spinner, NULL);
	pthread_create(&t, NULL, sleeper, NULL);
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 2)
		usleep(1000);
	usleep(20000);
	exit(0);
}
