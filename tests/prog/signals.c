/*
 * signals.c - malloc-family calls from a signal handler that runs while
 * memcheck itself is at work (tests/test_errors.c; issue 14, item 5).
 *
 * usage: signals
 *   The handler must run inside memcheck, but never inside the
 *   allocator, whose own state a handler's malloc may break (glibc
 *   aborts, tcmalloc crashes; that is theirs): so it is raised, on the
 *   thread at hand, from getpid(), which this program defines.  Linked
 *   with libmemcheck, the program's getpid is the one memcheck's calls
 *   reach, and memcheck calls it with its recursion guard up: when it
 *   ends a region (the "==pid==" of the text report) and when a thread
 *   first allocates.  The handler frees a block the program allocated,
 *   takes one of the same size (the allocator gives back the address
 *   memcheck just saw freed: before, that block was uncounted, and its
 *   free a "double free"), reallocs, callocs and takes aligned blocks.
 *   All of that inside a region "all", whose figures must be the
 *   program's own (the threads are started before it and end after it).
 *   Prints "allocs=N frees=M reallocs=R handled=H" as valgrind would
 *   count them, frees everything, exits 0.
 */
#include <memcheck/memcheck.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define POOL 8
static void *pool[POOL];
static unsigned long allocs, frees, reallocs, handled;
static __thread volatile sig_atomic_t armed;

pid_t getpid(void)
{
	if (armed) {
		armed = 0;
		syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), SIGUSR1);
	}
	return (pid_t)syscall(SYS_getpid);
}

static void take(int i, void *p)
{
	if (p)
		allocs++;
	if (pool[i]) {
		free(pool[i]);
		frees++;
	}
	pool[i] = p;
}

static void work(void)
{
	/* pool[0] holds a 40-byte block: free it, take one of 40 */
	free(pool[0]);
	frees++;
	pool[0] = malloc(40);
	allocs++;
	char *r = realloc(pool[1], 300);  /* pool[1]: a live block, moved */
	reallocs++;
	if (r) {
		frees += pool[1] != NULL;
		allocs++;
		pool[1] = r;
	}
	take(2, calloc(3, 16));
	void *a = NULL;
	if (posix_memalign(&a, 64, 100) == 0)
		take(3, a);
	take(4, aligned_alloc(32, 64));
	take(5, memalign(128, 24));
	handled++;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	work();
}

#define THREADS 4
static sem_t go, done, quit;

static void *thread_main(void *arg)
{
	(void)arg;
	sem_wait(&go);
	armed = 1;      /* this thread's first malloc raises it */
	void *p = malloc(8);
	free(p);
	sem_post(&done);
	sem_wait(&quit);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	struct sigaction back;
	if (sigaction(SIGUSR1, NULL, &back) != 0 || back.sa_sigaction != on_usr1 ||
	    !(back.sa_flags & SA_SIGINFO))
		return 3; /* the program sees its own handler */
	pthread_t t[THREADS];
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	sem_init(&quit, 0, 0);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			return 2;
	memcheck_begin("all");
	for (int round = 0; round < 3; round++) {
		take(0, malloc(40));
		take(1, malloc(24));
		void *p = malloc(40);  /* freed: the handler's malloc(40) gets it back */
		free(p);
		allocs++;
		frees++;
		memcheck_begin("handled");
		armed = 1;
		memcheck_end(NULL);
	}
	for (int i = 0; i < THREADS; i++) {
		sem_post(&go);
		sem_wait(&done);
		allocs++;
		frees++;
	}
	for (int i = 0; i < POOL; i++)
		take(i, NULL);
	memcheck_end(NULL);
	for (int i = 0; i < THREADS; i++)
		sem_post(&quit);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("allocs=%lu frees=%lu reallocs=%lu handled=%lu\n", allocs, frees, reallocs,
	       handled);
	return 0;
}
