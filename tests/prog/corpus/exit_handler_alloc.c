/* Leaks made in exit handlers: an atexit handler allocates a list and
 * loses it, another drops the global that held a chain, a destructor
 * loses a block: all lost.  An on_exit handler keeps its block in a
 * global: still reachable. */
#include "corpus.h"

struct node *chain;
void *kept;

static void alloc_and_lose(void)
{
	USE(list(4));
}

static void drop(void)
{
	chain = NULL;
}

static void keep(int status, void *arg)
{
	(void)status;
	(void)arg;
	kept = malloc(50);
}

__attribute__((destructor)) static void fini(void)
{
	USE(malloc(70));
}

int main(void)
{
	chain = list(3);
	atexit(alloc_and_lose);
	atexit(drop);
	on_exit(keep, NULL);
	return 0;
}
