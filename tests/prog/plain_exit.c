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
 *   leak-_exit [N] leak, _exit(N) (default 0): no exit handler runs;
 *                  memcheck reports at its _exit wrapper
 *   leak-abort     leak, then abort(): a SIGABRT handler calls _exit(0)
 *                  (libsodium's misuse and sodium_utils2/3 tests)
 *   alarm US       leak, then malloc and free in a loop until SIGALRM,
 *                  after US microseconds, whose handler calls _exit(0):
 *                  often inside memcheck's or the allocator's code
 *   leak-dtor      leak, return 5; a destructor then calls exit(0), so
 *                  that the library's own destructor never runs
 *   leak-atexit    return 0; an atexit handler leaks, then exit(0)
 *   fork           the child leaks and exits 0; the parent, clean,
 *                  prints the child's status and returns 0
 *   fork-_exit     the same, the child leaving by _exit(0)
 *   exec           the child execs this program's leak case; the
 *                  parent, clean, prints the child's status, returns 0
 *   exec-self      execs this program's leak case in place (same pid)
 *   expect-fail N  a test that expects a tool to reject its input (as
 *                  wayland's scanner test): the child execs this
 *                  program's leak-status N case (N non-zero: it fails
 *                  on purpose, leaking); the parent, clean, prints
 *                  the child's status and returns 0 when the child
 *                  failed, 1 when it exited 0
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

static void exit_0(int sig)
{
	(void)sig;
	_exit(0);
}

/* malloc and free until the alarm's handler ends the process */
static void churn(long us)
{
	static void *keep[64];
	signal(SIGALRM, exit_0);
	struct itimerval t = { { 0, 0 }, { 0, us } };
	setitimer(ITIMER_REAL, &t, NULL);
	for (unsigned i = 0;; i++) {
		unsigned k = i * 2654435761u >> 26;
		free(keep[k]);
		keep[k] = malloc(16 + (i * 7919u) % 2000);
	}
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
		_exit(argc > 2 ? atoi(argv[2]) : 0);
	}
	if (!strcmp(c, "leak-abort")) {
		leak(40);
		fflush(stdout);
		signal(SIGABRT, exit_0);
		abort();
	}
	if (!strcmp(c, "alarm") && argc > 2) {
		leak(40);
		fflush(stdout);
		churn(atol(argv[2]));
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
	if (!strcmp(c, "fork") || !strcmp(c, "fork-_exit")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			leak(40);
			if (c[4])
				_exit(0);
			exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf(" child=%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(c, "expect-fail") && argc > 2) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl(argv[0], argv[0], "leak-status", argv[2], (char *)NULL);
			_exit(127);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf(" child=%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return WIFEXITED(st) && WEXITSTATUS(st) != 0 ? 0 : 1;
	}
	if (!strcmp(c, "exec") || !strcmp(c, "exec-self")) {
		fflush(stdout);
		pid_t pid = c[4] ? 0 : fork();
		if (pid == 0) {
			execl(argv[0], argv[0], "leak", (char *)NULL);
			_exit(127);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf(" child=%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	return 2;
}
