/* A lost chain: the head definitely lost, the 9 behind it indirectly. */
#include "plain_leak_common.h"

struct node { struct node *next; char pad[24]; };

__attribute__((noinline)) static void chain(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = calloc(1, sizeof *x);
		x->next = head;
		head = x;
	}
}

int main(void)
{
	chain(10);
	scrub();
	return 0;
}
