/*
 * plain_leak_signal.c - a signal handler that allocates: one block it
 * loses, one a global keeps (preloaded only, never linked to memcheck; no
 * stdio; tests/test_valgrind.c).
 *
 * Under valgrind the lost block's stack is malloc, on_usr1, then the C
 * library's signal return (obj: libc), then the code the signal
 * interrupted (raise): no frame lies between the handler and the C
 * library.  memcheck runs the handler from its own trampoline
 * (lib/signals.c), whose frame must not show there, or a suppression
 * written as valgrind shows the stack misses it.
 */
#include <signal.h>

#include "plain_leak_common.h"

void *kept;

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	void *lost = malloc(48);
	memset(lost, 1, 48);
	kept = malloc(32);
	__asm__ volatile("" : : "r"(lost) : "memory"); /* the only copy dies here */
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0)
		return 1;
	scrub();
	return 0;
}
