/*
 * fork.c - a region open across fork().
 *
 * The parent begins "parent", leaks 111 bytes and forks.  The child
 * begins "child", leaks 222 bytes, allocates and frees 333, ends "child"
 * and then the inherited "parent", and leaves with exit().  The parent
 * waits, allocates and frees 4444 bytes and ends "parent".  Each process
 * prints its pid on stdout ("parent=PID", "child=PID"); the test reads
 * the figures from the JSON report.  Exit status 0, or 1 when the child
 * failed.
 *
 * fork threads: two threads malloc and free without pause while the main
 * thread forks 10 children, each of which begins a region "child", leaks
 * 20 bytes, allocates and frees 10 and ends it.  A child that does not
 * finish within 10 s (a lock held across fork) is killed: exit 2.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

void *leak_in_parent(void);
void *leak_in_child(void);

void *leak_in_parent(void)
{
	return malloc(111);
}

void *leak_in_child(void)
{
	return malloc(222);
}

static atomic_int stop;

static void *churn(void *arg)
{
	void *v[64] = { 0 };
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		unsigned k = i % 64;
		free(v[k]);
		v[k] = malloc((i * 7) % 300 + 1);
	}
	for (int k = 0; k < 64; k++)
		free(v[k]);
	return arg;
}

static int fork_with_threads(void)
{
	pthread_t th[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, churn, NULL);
	int bad = 0;
	for (int n = 0; n < 10; n++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			memcheck_begin("child");
			void *b = malloc(20);
			free(malloc(10));
			memcheck_end(NULL);
			(void)b;
			exit(0);
		}
		int st = 0;
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			pid_t w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 10) {
				fprintf(stderr, "fork threads: child %d hangs; killed\n", (int)pid);
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				bad = 2;
				break;
			}
			usleep(1000);
		}
		if (!bad && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "fork threads: child %d: status 0x%x\n", (int)pid, st);
			bad = 1;
		}
	}
	atomic_store(&stop, 1);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "threads") == 0)
		return fork_with_threads();

	memcheck_begin("parent");
	void *a = leak_in_parent();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		memcheck_begin("child");
		void *b = leak_in_child();
		free(malloc(333));
		memcheck_end(NULL);
		memcheck_end(NULL);     /* the "parent" region, as the child saw it */
		printf("child=%d\n", (int)getpid());
		(void)b;
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	free(malloc(4444));
	memcheck_end(NULL);
	printf("parent=%d\n", (int)getpid());
	free(a);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
