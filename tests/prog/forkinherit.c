/*
 * forkinherit.c - a fork while another thread is inside a region of its
 * own (tests/test_fork.c): the child inherits that region, which no
 * thread of the child can end.
 *
 * usage: forkinherit MODE
 *   A thread begins region "other", allocates a block it holds, and
 *   waits; main forks only once the thread is surely inside its region
 *   (a barrier, no timing luck), waits for the child, then lets the
 *   thread free its block and end its region.  A pthread_atfork child
 *   handler keeps a block in a global (still reachable) in every child.
 *   Each child allocates and frees a block, begins and ends a region
 *   "child" of its own, and leaves with exit(); modes add to that:
 *   clean   nothing more: the child must pass
 *   leak    its region "child" loses a block (definitely lost)
 *   lost    the child loses a block outside any region of its own,
 *           while the inherited one is innermost: its process region
 *           must see it
 *   own     main begins "own" before the fork and the child leaves it
 *           open: a region of the forking thread is the child's own
 *   under   main begins "own" above "other" before the fork, and the
 *           child ends it: memcheck_end ends the innermost region
 *   over    main begins "own" before the thread begins "other" above
 *           it, and the child ends "own": the child's memcheck_end ends
 *           the innermost region its own thread began
 *   again   the child forks a grandchild from a new thread (which may
 *           reuse the dead thread's descriptor, so that pthread_self()
 *           equals the id that began "other"); the grandchild does what
 *           a clean child does; the child exits with its status
 *   Prints "child=PID status=S" (S: the child's exit status, or 128+N
 *   for signal N) and exits 0, or 2 on a system error.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

#include "plain_leak_common.h"

static pthread_barrier_t inside, done;
static pthread_t other_thread;
static void *volatile kept;
static void *volatile sink;

static void *other(void *arg)
{
	memcheck_begin("other");
	void *volatile held = malloc(48);
	pthread_barrier_wait(&inside); /* main forks now */
	pthread_barrier_wait(&done);   /* the child has exited */
	free(held);
	memcheck_end(NULL);
	return arg;
}

static void atfork_child(void)
{
	kept = malloc(16);
}

/* A block whose address nothing keeps. */
__attribute__((noinline)) static void lose(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	sink = p;
	sink = NULL;
}

static int status_of(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What every child does: the child's own region, clean or leaking. */
__attribute__((noinline)) static void child_work(int leak)
{
	free(malloc(100));
	memcheck_begin("child");
	void *p = malloc(32);
	if (leak)
		lose(24);
	free(p);
	scrub();
	memcheck_end(NULL);
}

static void *fork_grandchild(void *arg)
{
	(void)arg;
	printf("reused=%d\n", pthread_equal(pthread_self(), other_thread) != 0);
	fflush(stdout);
	pid_t g = fork();
	if (g == 0) {
		child_work(0);
		exit(0);
	}
	return (void *)(intptr_t)(g < 0 ? -1 : status_of(g));
}

static int child(const char *mode)
{
	child_work(!strcmp(mode, "leak"));
	if (!strcmp(mode, "lost")) {
		lose(40);
		scrub();
	}
	if (!strcmp(mode, "under") || !strcmp(mode, "over"))
		memcheck_end(NULL); /* "own" */
	if (!strcmp(mode, "again")) {
		pthread_t t;
		void *st;
		if (pthread_create(&t, NULL, fork_grandchild, NULL) || pthread_join(t, &st))
			return 2;
		return (int)(intptr_t)st;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	bool over = !strcmp(mode, "over");
	if (over)
		memcheck_begin("own");
	if (pthread_barrier_init(&inside, NULL, 2) || pthread_barrier_init(&done, NULL, 2) ||
	    pthread_atfork(NULL, NULL, atfork_child) ||
	    pthread_create(&other_thread, NULL, other, NULL))
		return 2;
	pthread_barrier_wait(&inside);
	if (!strcmp(mode, "own") || !strcmp(mode, "under"))
		memcheck_begin("own");
	fflush(stdout);
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0)
		exit(child(mode));
	int st = status_of(c);
	printf("child=%d status=%d\n", (int)c, st);
	/* "own" lies above the thread's "other" (below it in "over"): the
	 * stack is the process's, and the innermost region ends first. */
	if (!strcmp(mode, "own") || !strcmp(mode, "under"))
		memcheck_end(NULL);
	pthread_barrier_wait(&done);
	pthread_join(other_thread, NULL);
	if (over)
		memcheck_end(NULL);
	free(kept);
	return st < 0 ? 2 : 0;
}
