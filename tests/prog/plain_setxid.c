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
 * Prints "rc=N" (the call's result), then "preload=1" where LD_PRELOAD
 * reached the shell system(3) runs, else "preload=0" (the shell, started
 * in secure execution, had it taken out of its environment).
 * Exit 0, or 1 on a setup error; 77 where not root (the calls fail).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

/* Through the C library's internal execve, as system(3) does: a shell
 * says whether LD_PRELOAD reached it.  Not this program run again: as
 * nobody it may not reach its own file (a clone under a directory only
 * root may enter). */
static int run_child(void)
{
	fflush(stdout);
	return system("if [ -n \"$LD_PRELOAD\" ]; then echo preload=1; else echo preload=0; fi") == 0
		       ? 0
		       : 1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	const char *how = argv[1];
	if (geteuid() != 0)
		return 77;
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
