/*
 * plain_dtorfree: hands a block to libdtorfree.so, whose destructor
 * frees it at exit (tests/test_exitorder25.c), and ends in one of the
 * ways a process ends.  Nothing on stdout unless asked: its buffer
 * would be a block left, and a program linked with -rpath
 * $ORIGIN/../.. (dtorfree_linked) finds no shipped suppressions
 * (supp_region.c's load_defaults takes the parent of .../prog/..).
 *
 * usage: plain_dtorfree [CASE]
 *   (none)    return 0
 *   leak      leak 40 bytes, return 0
 *   out       "out" to stdout, buffered, return 0
 *   thread    a thread calls exit(0) while main waits
 *   atexit    return 0; an atexit handler calls exit(0)
 *   fork      the child hands its own block over and exits 0; the
 *             parent prints "child=STATUS" and returns 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void dtorfree_set(const char *s);

static void *volatile sink;

__attribute__((noinline)) static void leak(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	sink = p;
	sink = NULL;
}

static void *exit_thread(void *arg)
{
	(void)arg;
	exit(0);
}

static void exit_again(void)
{
	exit(0);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	dtorfree_set(argv[0]);
	if (!strcmp(c, "leak"))
		leak(40);
	if (!strcmp(c, "out"))
		fputs("out", stdout);
	if (!strcmp(c, "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_thread, NULL) != 0)
			return 3;
		for (;;)
			pause();
	}
	if (!strcmp(c, "atexit"))
		atexit(exit_again);
	if (!strcmp(c, "fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			dtorfree_set("child");
			exit(0);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 4;
		printf("child=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return 0;
}
