/*
 * forklocks.c - fork while other threads hold, or are about to take,
 * every lock memcheck has (tests/test_fork.c, make stress).
 *
 * usage: forklocks FORKS
 *   starts a thread for each lock: one ends regions that leak (the region
 *   stack, the scan's locks, suppression matching and libdw), one starts
 *   short threads (the thread slots), one allocates from ever new stacks
 *   (the stack depot, and with MEMCHECK_FAIL_SITE the fault lock and
 *   libdw again), one grows and empties the block table, one adds and
 *   removes scan roots, one asks the region depth; then forks FORKS
 *   times.  Each child allocates, ends a leaking region of its own and
 *   exits with exit() (so that memcheck's exit work runs in the child
 *   too); the parent waits for it.  Prints "forks=N" and exits 0 when
 *   every child exited 0, 1 otherwise.  A deadlock is a hang: the caller
 *   times it out.
 *
 * Each thread yields the processor after each round, so that the
 * children, which have work of their own to do, get some of it.
 *
 * Why each thread: an allocator's fork handler holds the allocator's
 * locks while memcheck's runs (or after it), so a memcheck lock that a
 * thread holds while it calls the allocator deadlocks fork (issue 14,
 * item 3: a thread ending regions, main forking, jemalloc and tcmalloc).
 */
#include <memcheck/memcheck.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stack_paths.h"

static atomic_int stop;

static void *ender(void *arg)
{
	(void)arg;
	while (!stop) {
		memcheck_begin("ender");
		void *volatile p = malloc(40);
		memcheck_end(NULL);
		free(p);
	}
	return NULL;
}

static void *short_lived(void *arg)
{
	free(malloc((size_t)(uintptr_t)arg));
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, (void *)(uintptr_t)24) == 0)
			pthread_join(t, NULL);
		sched_yield();
	}
	return NULL;
}

static void alloc_free(void)
{
	free(malloc(16));
}

/* A new stack for (almost) every round. */
static void *stacks(void *arg)
{
	(void)arg;
	for (unsigned path = 0; !stop; path++) {
		path_down(path, 12, alloc_free);
		sched_yield();
	}
	return NULL;
}

static void *grow(void *arg)
{
	(void)arg;
	enum { N = 20000 };
	static void *v[N];
	while (!stop) {
		for (int i = 0; i < N; i++)
			v[i] = malloc(8);
		for (int i = 0; i < N; i++)
			free(v[i]);
		sched_yield();
	}
	return NULL;
}

static void *roots(void *arg)
{
	(void)arg;
	static char area[64];
	while (!stop) {
		memcheck_add_root(area, sizeof area);
		memcheck_remove_root(area);
		sched_yield();
	}
	return NULL;
}

static void *depth(void *arg)
{
	(void)arg;
	while (!stop) {
		(void)memcheck_depth();
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 100;
	void *(*const fns[])(void *) = { ender, churn, stacks, grow, roots, depth };
	enum { NT = sizeof fns / sizeof fns[0] };
	pthread_t t[NT];
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0)
			return 2;
	int bad = 0;
	for (int i = 0; i < forks; i++) {
		pid_t c = fork();
		if (c < 0)
			return 2;
		if (c == 0) {
			/* A child that hangs must not outlive the test. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(3);
			free(malloc(100));
			memcheck_begin("child");
			void *volatile leak = malloc(24);
			(void)leak;
			memcheck_end(NULL);
			exit(0);
		}
		int st;
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forklocks: child %d of %d ended with status 0x%x\n", i + 1,
				forks, st);
			bad++;
		}
	}
	stop = 1;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("forks=%d\n", forks - bad);
	return bad ? 1 : 0;
}
