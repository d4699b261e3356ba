/*
 * plain_sigtimer.c - malloc and free in a signal handler that a profiling
 * timer fires every 50 us, wherever the program is: in its own code, in
 * memcheck, in the allocator (tests/test_errors.c, make stress; issue 14,
 * item 5).  Not linked to memcheck: it meets it through LD_PRELOAD.
 *
 * usage: plain_sigtimer SECONDS
 *   The main loop allocates blocks of 32-131 bytes and swaps them into a
 *   pool of 256 slots, freeing what it takes out; the handler does the
 *   same four times per signal with blocks of 16-271 bytes.  Each
 *   pointer has one owner at a time, so the program frees everything it
 *   allocated exactly once.  Undefined behaviour in C: the allocator may
 *   be interrupted by its own malloc.  glibc aborts and tcmalloc crashes
 *   on that, bare; mimalloc and jemalloc do not, but may hand out a live
 *   block twice, which the program counts (dups: a new block already in
 *   the pool) -- and memcheck rightly reports as a double free when both
 *   owners free it.  Writes "allocs=N frees=M dups=D" to standard error
 *   (no stdio buffer: no allocation of its own) and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define N 256
static void *volatile slots[N];
static volatile unsigned long hallocs, hfrees, dups;

static void *swap(unsigned k, void *p)
{
	return __atomic_exchange_n(&slots[k], p, __ATOMIC_SEQ_CST);
}

static void count_dups(void *p)
{
	for (unsigned q = 0; q < N; q++)
		if (slots[q] == p)
			dups++;
}

static void handler(int sig)
{
	(void)sig;
	static unsigned seed = 7;
	for (int i = 0; i < 4; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned k = (seed >> 8) % N;
		void *p = swap(k, NULL);
		if (p) {
			free(p);
			hfrees++;
		}
		p = malloc(16 + k);
		hallocs++;
		count_dups(p);
		p = swap(k, p);
		if (p) {
			free(p);
			hfrees++;
		}
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_PROF, &it, NULL);
	unsigned long allocs = 0, frees = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int j = 0; j < 10000; j++) {
			void *p = malloc(32 + (unsigned)j % 100);
			allocs++;
			count_dups(p);
			p = swap((unsigned)j % N, p);
			if (p) {
				free(p);
				frees++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > secs)
			break;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	for (unsigned k = 0; k < N; k++) {
		void *p = swap(k, NULL);
		if (p) {
			free(p);
			frees++;
		}
	}
	char line[128];
	int n = snprintf(line, sizeof line, "allocs=%lu frees=%lu dups=%lu\n", allocs + hallocs,
			 frees + hfrees, dups);
	if (write(2, line, (size_t)n) != n)
		return 1;
	return 0;
}
