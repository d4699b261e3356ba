/* exit() called from a nested function whose live frames still hold
 * pointers (a local and main's own): still reachable, as valgrind sees
 * them; a list lost earlier in a frame now dead: lost. */
#include "corpus.h"

__attribute__((noinline)) static void lose(void)
{
	USE(list(3));
}

__attribute__((noinline)) static void leave(struct node *mine)
{
	struct node *volatile local = list(2);
	USE(local);
	USE(mine);
	exit(0);
}

int main(void)
{
	lose();
	struct node *volatile m = list(1);
	leave(m);
	return 0;
}
