/*
 * plain_exit.c - the ways a process ends, with or without a leak, for
 * MEMCHECK_EXITCODE (tests/test_exitcode.c).  Not linked to memcheck.
 * Each case writes "out" to stdout without a newline first: stdio must
 * still be flushed when memcheck changes the exit status.
 *
 * usage: plain_exit CASE
 *   clean          free everything, return 0
 *   leak           leak 40 bytes, return 0
 *   leak-status N  leak, exit(N)
 *   leak-_exit     leak, _exit(0): no handler runs, no report
 *   leak-dtor      leak, return 5; a destructor then calls exit(0), so
 *                  that the library's own destructor never runs
 *   leak-atexit    return 0; an atexit handler leaks, then exit(0)
 *   fork           the child leaks and exits 0; the parent, clean,
 *                  prints the child's status and returns 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static int exit_in_dtor;

__attribute__((noinline)) static void leak(size_t n)
{
	char *p = malloc(n); /* SITE leak */
	memset(p, 1, n);
	sink = p;
	sink = NULL;
}

static void leak_at_exit(void)
{
	leak(24);
}

__attribute__((destructor)) static void dtor(void)
{
	if (exit_in_dtor)
		exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *c = argv[1];
	fputs("out", stdout);
	if (!strcmp(c, "clean")) {
		free(malloc(40));
		return 0;
	}
	if (!strcmp(c, "leak")) {
		leak(40);
		return 0;
	}
	if (!strcmp(c, "leak-status") && argc > 2) {
		leak(40);
		exit(atoi(argv[2]));
	}
	if (!strcmp(c, "leak-_exit")) {
		leak(40);
		fflush(stdout);
		_exit(0);
	}
	if (!strcmp(c, "leak-dtor")) {
		leak(40);
		exit_in_dtor = 1;
		return 5;
	}
	if (!strcmp(c, "leak-atexit")) {
		atexit(leak_at_exit);
		return 0;
	}
	if (!strcmp(c, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			leak(40);
			exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf(" child=%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	return 2;
}
