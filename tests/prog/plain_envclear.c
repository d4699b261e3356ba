/*
 * plain_envclear.c - a test that runs its leaking part with a cleared
 * environment, for test_frameworks.c: memcheck follows the exec
 * (MEMCHECK_FOLLOW_EXEC, lib/execenv.c) and the leak fails the test.
 * Preloaded only.
 *
 * usage: plain_envclear MODE
 *   env     execs env -i PROGRAM child (a wrapper that clears the
 *           environment, left out of the measuring itself)
 *   execve  execs PROGRAM child with only PATH in its environment
 *   spawn   posix_spawns PROGRAM child with an empty environment, waits
 *           and exits 0 whatever the child's status
 *   child   leaks 41 bytes, says whether LD_PRELOAD reached it, exits 0
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 99;
	self[n] = 0;
	if (!strcmp(mode, "child")) {
		char *volatile p = malloc(41); /* lost */
		p[0] = 1;
		printf("child: LD_PRELOAD %s\n", getenv("LD_PRELOAD") ? "set" : "unset");
		return 0;
	}
	fflush(stdout);
	if (!strcmp(mode, "env")) {
		execl("/usr/bin/env", "env", "-i", self, "child", (char *)NULL);
	} else if (!strcmp(mode, "execve")) {
		execve(self, (char *[]){ self, "child", NULL },
		       (char *[]){ "PATH=/usr/bin:/bin", NULL });
	} else if (!strcmp(mode, "spawn")) {
		pid_t pid;
		char *args[] = { self, "child", NULL };
		if (posix_spawn(&pid, self, NULL, NULL, args, (char *[]){ NULL }))
			return 98;
		int st;
		waitpid(pid, &st, 0);
		printf("spawn: the child's status ignored\n");
		return 0;
	}
	perror(mode);
	return 97;
}
