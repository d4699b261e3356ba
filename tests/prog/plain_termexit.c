/*
 * plain_termexit.c - a program whose exit a SIGTERM interrupts, as a
 * test driver's timeout does a process that is slow to end (under
 * LD_PRELOAD, not linked to memcheck).
 *
 * usage: plain_termexit [BLOCKS [MS]]
 *   keeps BLOCKS (2,000,000) blocks of 16 bytes reachable, leaks 100
 *   bytes from leak_here(), arms a timer that sends the process SIGTERM
 *   in MS (20) milliseconds, prints "exiting" (flushed: the process may
 *   die before exit would write it) and returns 0 from main.
 *   Bare, it has ended long before the timer; under memcheck the timer
 *   comes while memcheck's exit scans the blocks.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "leak_here.h"
#include "plain_leak_common.h"

int main(int argc, char **argv)
{
	long blocks = argc > 1 ? atol(argv[1]) : 2000000;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	void **keep = malloc((size_t)blocks * sizeof *keep);
	if (!keep)
		return 3;
	for (long i = 0; i < blocks; i++)
		if (!(keep[i] = malloc(16)))
			return 3;
	leak(100);
	scrub();
	timer_t t;
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGTERM };
	struct itimerspec at = { .it_value = { ms / 1000, (ms % 1000) * 1000000 } };
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0 || timer_settime(t, 0, &at, NULL) != 0)
		return 4;
	printf("exiting\n");
	fflush(stdout);
	return 0;
}
