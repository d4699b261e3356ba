/* A block whose only pointer was in a block since freed: lost.  And a
 * list whose head was realloc'd (moved): reachable through the new
 * copy. */
#include "corpus.h"

struct holder {
	struct node *l;
	char pad[100];
};

struct holder *kept;

int main(void)
{
	struct holder *h = malloc(sizeof *h);
	h->l = list(3);
	free(h);
	kept = malloc(16);
	kept = realloc(kept, sizeof *kept);
	kept->l = list(2);
	kept = realloc(kept, 4000);
	return 0;
}
