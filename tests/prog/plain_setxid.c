/*
 * plain_setxid.c - a program run as root that parts its effective ids
 * from its real ones, as a test harness does around each test
 * (libarchive's: seteuid to nobody, then system("bsdtar ...")), and runs
 * a program: that program starts in secure execution, where the dynamic
 * linker ignores LD_PRELOAD (tests/test_secure.c checks that memcheck
 * says so, and not where the ids stay alike).
 *
 * usage: plain_setxid HOW
 *   HOW   seteuid, setegid, setreuid, setresuid: that call with 65534 as
 *         the effective id (setreuid, setresuid: the real id kept);
 *         alike: setresgid and setresuid with 65534 for every id, in a
 *         forked child (as a daemon's launcher drops root for good)
 *   child (run by the others): prints "preload=1" where LD_PRELOAD
 *         reached it, else "preload=0"
 * Prints "rc=N" (the call's result), then the child's "preload=N".
 * Exit 0, or 1 on a setup error; 77 where not root (the calls fail).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static char self[4096];

static int run_child(void)
{
	fflush(stdout);
	/* through the C library's internal execve, as system(3) does */
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "exec '%s' child", self);
	return system(cmd) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	const char *how = argv[1];
	if (!strcmp(how, "child")) {
		/* the shell system(3) ran started in secure execution and
		 * dropped its ids again (dash, bash without -p): this one
		 * starts as any, but the shell's dynamic linker took
		 * LD_PRELOAD out of the environment */
		printf("preload=%d\n", getenv("LD_PRELOAD") != NULL);
		return 0;
	}
	if (geteuid() != 0)
		return 77;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	int rc;
	if (!strcmp(how, "seteuid"))
		rc = seteuid(NOBODY);
	else if (!strcmp(how, "setegid"))
		rc = setegid(NOBODY);
	else if (!strcmp(how, "setreuid"))
		rc = setreuid((uid_t)-1, NOBODY);
	else if (!strcmp(how, "setresuid"))
		rc = setresuid((uid_t)-1, NOBODY, (uid_t)-1);
	else if (!strcmp(how, "alike")) {
		pid_t pid = fork();
		if (pid == 0) {
			if (setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
			    setresuid(NOBODY, NOBODY, NOBODY) != 0)
				_exit(1);
			printf("rc=0\n");
			_exit(run_child());
		}
		int st;
		return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	} else
		return 1;
	printf("rc=%d\n", rc);
	return run_child();
}
