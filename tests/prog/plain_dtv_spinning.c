/*
 * plain_dtv_spinning.c - a thread that blocks every signal and computes
 * when the process exits, having never allocated: memcheck's stop
 * signal stays pending to it, the kernel shows no system call it waits
 * in, and memcheck has no slot of its (account.c), so nothing of it was
 * read and its DTV (the one block of the program, pthread_create's)
 * was counted freed by glibc.supp's "# freeres: libc" entry.  valgrind
 * reads every thread's memory: possibly lost, 1 error.  Its descriptor
 * is now read from glibc's list of stacks in use, with its stack
 * (roots.c's whole_stack; tests/test_valgrind.c,
 * spinning_thread_dtv_as_valgrinds).
 *
 * Usage: plain_dtv_spinning.  Exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static atomic_int started;

static void *spin(void *arg)
{
	atomic_fetch_add(&started, 1);
	for (volatile unsigned long n = 0;; n++)
		;
	return arg;
}

int main(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits it */
	pthread_t t;
	if (pthread_create(&t, NULL, spin, NULL))
		return 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (atomic_load(&started) < 1)
		;
	return 0;
}
