/* A 2-block cycle lost just before main returns: 1 definite, 1
 * indirect; and a 4-block ring kept in a global. */
#include "corpus.h"

struct node *ring;

int main(void)
{
	struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	a->next = b;
	b->next = a;
	USE(a);
	ring = list(4);
	struct node *last = ring;
	while (last->next)
		last = last->next;
	last->next = ring;
	return 0;
}
