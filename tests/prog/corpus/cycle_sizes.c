/* Lost cycles whose blocks differ in size: which block leads the
 * clique (definite) depends on addresses; the lost bytes do not. */
#include "corpus.h"

struct big {
	struct big *next;
	char pad[200];
};

int main(void)
{
	struct big *a = malloc(sizeof *a);
	struct node *b = malloc(sizeof *b);
	char **c = malloc(40);
	a->next = (struct big *)b;
	b->next = (struct node *)c;
	c[0] = (char *)a;
	USE(a);
	return 0;
}
