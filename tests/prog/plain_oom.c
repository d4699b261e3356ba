/*
 * plain_oom.c - programs for `memcheck oom` to sweep (test_oom.c), each
 * with error paths of a known kind.  Preloaded only, never linked to
 * memcheck, as an unmodified program would be.
 *
 * usage: plain_oom MODE
 *   handle  every failure handled: what was taken is freed, exit 0
 *   leak    the third allocation's failure leaks the first block
 *   crash   the second allocation is used unchecked
 *   fail    a failure makes the program exit 1 (a test failing on OOM)
 *   fork    three children, one process region each; the second leaks
 *   slow    1,000 allocations over about 10 ms, every failure handled
 *   quit    a failure makes the program _exit(1), with no report (as
 *           check's forked tests end when they fail)
 *   exit3   exits 3 with no failure injected
 *   retry   the second allocation is retried until it succeeds: when it
 *           fails for good (a persistent failure), the program never ends
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int handle(int n)
{
	void **v = calloc((size_t)n, sizeof *v);
	if (!v)
		return 0;
	for (int i = 0; i < n; i++) {
		v[i] = malloc(32);
		if (!v[i])
			break;
	}
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return 0;
}

static int leak(void)
{
	char *a = malloc(10);
	if (!a)
		return 0;
	char *b = malloc(20);
	if (!b) {
		free(a);
		return 0;
	}
	char *c = malloc(30);
	if (!c) {
		free(b); /* a is forgotten */
		return 0;
	}
	free(a);
	free(b);
	free(c);
	return 0;
}

static int crash(void)
{
	char *a = malloc(10);
	if (!a)
		return 0;
	char *b = malloc(20);
	strcpy(b, "unchecked");
	free(a);
	free(b);
	return 0;
}

static int fail(void)
{
	void *a = malloc(10);
	if (!a)
		return 1;
	void *b = malloc(10);
	if (!b) {
		free(a);
		return 1;
	}
	free(a);
	free(b);
	return 0;
}

static void spin_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static int slow(void)
{
	enum { N = 1000 };
	static void *v[N];
	for (int i = 0; i < N; i++) {
		v[i] = malloc(64);
		if (!v[i])
			break;
		if (i % 100 == 99)
			spin_us(1000);
	}
	for (int i = 0; i < N; i++)
		free(v[i]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "handle"))
		return handle(5);
	if (!strcmp(mode, "leak"))
		return leak();
	if (!strcmp(mode, "crash"))
		return crash();
	if (!strcmp(mode, "fail"))
		return fail();
	if (!strcmp(mode, "slow"))
		return slow();
	if (!strcmp(mode, "quit")) {
		void *p = malloc(10);
		if (!p)
			_exit(1);
		free(p);
		return 0;
	}
	if (!strcmp(mode, "exit3"))
		return 3;
	if (!strcmp(mode, "retry")) {
		void *a = malloc(10);
		if (!a)
			return 0;
		void *b;
		while (!(b = malloc(20)))
			usleep(1000);
		free(a);
		free(b);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		for (int k = 0; k < 3; k++) {
			pid_t pid = fork();
			if (pid == 0)
				exit(k == 1 ? leak() : handle(3));
			int st;
			waitpid(pid, &st, 0);
		}
		return 0;
	}
	fprintf(stderr, "plain_oom: unknown mode '%s'\n", mode);
	return 99;
}
