/* The alternate signal stack in place at the exit, no handler ever run
 * on it: to valgrind its words are the program's as any other (only the
 * frames of handlers that returned are undefined), so a block only a
 * word there points to is still reachable (64 B), as is one a word of
 * the stack a handler ran on before points to (48 B), past its frames;
 * one never kept (32 B) is definitely lost.  memcheck cut the stack in
 * place out of the roots whether or not a handler had run on it: the
 * first block definitely lost. */
#include <signal.h>

#include "plain_leak_common.h"

static char used[65536] __attribute__((aligned(16)));
static char unused[65536] __attribute__((aligned(16)));
static void *volatile kept;

static void on_usr1(int sig)
{
	(void)sig;
}

int main(void)
{
	stack_t ss = { .ss_sp = used, .ss_size = sizeof used };
	if (sigaltstack(&ss, NULL) != 0)
		return 1;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0)
		return 1;
	ss.ss_sp = unused;
	if (sigaltstack(&ss, NULL) != 0)
		return 1;
	void *a = malloc(64), *b = malloc(48);
	memset(a, 0, 64);
	memset(b, 0, 48);
	((void **)unused)[8] = a;
	((void **)used)[8] = b;
	kept = malloc(32);
	kept = NULL;
	a = b = NULL;
	scrub();
	return 0;
}
