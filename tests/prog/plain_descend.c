/*
 * plain_descend.c - a program that runs its work in a child and ignores
 * how the child ended, as Criterion's runner and many hand-made test
 * runners do (not linked to memcheck; no stdio).
 *
 * usage: plain_descend leak          the child leaks 40 bytes and exits 0
 *        plain_descend clean         the child frees what it allocates
 *        plain_descend deep          the child runs plain_descend leak's
 *                                    child in a grandchild, and ignores it
 *        plain_descend exec PROG...  the child execs PROG with its arguments
 * The parent waits for its child, and exits 0 whatever the child's status.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

/* Run work in a child, wait for it, ignore its status. */
static void in_child(void (*work)(char **), char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		exit(2);
	if (pid == 0) {
		work(argv);
		exit(0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		;
}

static void leak(char **argv)
{
	(void)argv;
	char *p = malloc(40);
	memset(p, 'x', 40);
	sink = p;
	sink = NULL;
}

static void clean(char **argv)
{
	(void)argv;
	free(malloc(40));
}

static void deep(char **argv)
{
	in_child(leak, argv);
}

static void run(char **argv)
{
	execv(argv[0], argv);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "exec"))
		in_child(run, argv + 2);
	else if (argc == 2 && !strcmp(argv[1], "leak"))
		in_child(leak, NULL);
	else if (argc == 2 && !strcmp(argv[1], "clean"))
		in_child(clean, NULL);
	else if (argc == 2 && !strcmp(argv[1], "deep"))
		in_child(deep, NULL);
	else
		return 2;
	return 0;
}
