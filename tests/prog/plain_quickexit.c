/*
 * plain_quickexit.c - a program that leaves by quick_exit(3) (under
 * LD_PRELOAD, not linked to memcheck).
 *
 * usage: plain_quickexit MODE [STATUS]
 *   leaks 100 bytes from leak_here(), then:
 *     plain     quick_exit(STATUS) with no handler registered;
 *     handlers  registers two handlers with at_quick_exit: the first
 *               registered writes "h1" on stdout, the second leaks 333
 *               bytes (leak_more) and writes "h2"; quick_exit(STATUS)
 *               runs them last first ("h2\nh1\n");
 *     thread    quick_exit(STATUS) from a second thread while the main
 *               thread waits for it.
 *   STATUS defaults to 0.  The stack below main's frame is zeroed after
 *   the leak (scrub), so that no stale copy of its address remains.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_here.h"
#include "plain_leak_common.h"

static int status;

static void h1(void)
{
	if (write(1, "h1\n", 3) != 3)
		_exit(5);
}

static __attribute__((noinline)) void leak_more(void)
{
	leak(333);
}

static void h2(void)
{
	leak_more();
	if (write(1, "h2\n", 3) != 3)
		_exit(5);
}

static void *from_thread(void *arg)
{
	(void)arg;
	quick_exit(status);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	status = argc > 2 ? atoi(argv[2]) : 0;
	leak(100);
	/* the main thread, blocked while another ends the process, is
	 * scanned from its stack pointer up: no stale address there */
	scrub();
	if (!strcmp(argv[1], "handlers")) {
		if (at_quick_exit(h1) != 0 || at_quick_exit(h2) != 0)
			return 4;
	} else if (!strcmp(argv[1], "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, from_thread, NULL) != 0)
			return 4;
		pthread_join(t, NULL);
		return 6;
	} else if (strcmp(argv[1], "plain") != 0) {
		return 2;
	}
	quick_exit(status);
}
