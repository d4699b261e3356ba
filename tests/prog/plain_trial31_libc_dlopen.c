/*
 * plain_trial31_libc_dlopen - a thread ends through a call for which the
 * C library loads libgcc_s itself (its private dlopen, __libc_dlopen_mode):
 * pthread_exit unwinds the thread's stack, pthread_cancel acts on a
 * thread blocked in a cancellation point.  The loaded object's link map,
 * name and version table stay in use until __libc_freeres closes it, so
 * valgrind reports nothing in use at exit.  Everything the program
 * allocates itself it frees.
 *
 * usage: plain_trial31_libc_dlopen exit|cancel.  Prints "ended", exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *leave_by_exit(void *arg)
{
	pthread_exit(arg);
}

static void *wait_for_cancel(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_t t;
	void *ret = NULL;
	char *own = malloc(32); /* the program's own block, freed */
	if (!own)
		return 1;
	if (strcmp(argv[1], "exit") == 0) {
		if (pthread_create(&t, NULL, leave_by_exit, own))
			return 1;
	} else if (strcmp(argv[1], "cancel") == 0) {
		if (pthread_create(&t, NULL, wait_for_cancel, own) || pthread_cancel(t))
			return 1;
	} else {
		return 2;
	}
	if (pthread_join(t, &ret))
		return 1;
	free(own);
	puts("ended");
	return 0;
}
