/*
 * plain_spawnenv.c - a program that runs /usr/bin/printenv LD_PRELOAD
 * through each way the C library starts a program with the caller's
 * environ inside itself (system, popen) or builds the argument vector
 * itself (execl, execle, execlp), for tests/test_valgrind.c
 * (children_environment_as_valgrinds): the child prints the
 * LD_PRELOAD it was given, which under valgrind's command line with
 * --trace-children=no is the caller's own value, as valgrind's execve
 * passes it.
 *
 * Usage: plain_spawnenv system|popen|execl|execle|execlp.  Prints the
 * child's line(s) and "status N"; exits 0 (the exec modes: the child's
 * status).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *cmd = "/usr/bin/printenv LD_PRELOAD";
	fflush(stdout);
	if (!strcmp(mode, "system")) {
		int st = system(cmd);
		printf("status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(mode, "popen")) {
		FILE *f = popen(cmd, "r");
		if (!f)
			return 98;
		char line[8192];
		while (fgets(line, sizeof line, f))
			fputs(line, stdout);
		int st = pclose(f);
		printf("status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(mode, "execl"))
		execl("/usr/bin/printenv", "printenv", "LD_PRELOAD", (char *)NULL);
	else if (!strcmp(mode, "execle"))
		execle("/usr/bin/printenv", "printenv", "LD_PRELOAD", (char *)NULL, environ);
	else if (!strcmp(mode, "execlp"))
		execlp("printenv", "printenv", "LD_PRELOAD", (char *)NULL);
	perror(mode);
	return 97;
}
