/* Eight threads blocked in pause() when the main thread exits, each
 * keeping one block in a local and having lost one it filled.  Below a blocked thread's stack pointer, in the 128 bytes the
 * ABI lets a leaf function use (the red zone), lie what the calls it made
 * before left there: the lost block's address among them.  valgrind
 * skips those bytes as undefined; memcheck scanned them, and six or
 * seven of the eight lost blocks were still reachable under all four
 * allocators.  A thread stopped in a system call keeps nothing there now
 * (lib/threads.c, roots.c). */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plain_leak_common.h"

#define THREADS 8

static pthread_barrier_t all;
static pid_t tids[THREADS];

static void *worker(void *arg)
{
	long i = (long)arg;
	char *volatile keep = malloc((size_t)(100 + i));
	char *volatile lost = malloc((size_t)(50 + i));
	for (long k = 0; k < 50 + i; k++) /* no call: nothing of its own left below */
		lost[k] = 0;
	lost = NULL;
	tids[i] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&all);
	for (;;)
		pause();
	return keep;
}

/* Is thread tid asleep (past the barrier: in pause)?  Its state in
 * /proc, the third field of its stat. */
static int asleep(pid_t tid)
{
	char path[64], buf[256] = "";
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1; /* no way to tell: go on */
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int main(void)
{
	pthread_barrier_init(&all, NULL, THREADS + 1);
	pthread_t t;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t, NULL, worker, (void *)i);
	pthread_barrier_wait(&all);
	for (int i = 0, tries = 0; i < THREADS && tries < 5000; tries++)
		if (tids[i] && asleep(tids[i]))
			i++;
		else
			usleep(1000);
	scrub();
	return 0;
}
