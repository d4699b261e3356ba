/* Blocks reused from freed ones hold stale pointers in the bytes the
 * program never writes: a record whose tail held a list, freed and
 * allocated again with only its header written, keeps the list's
 * address in its uninitialised bytes.  valgrind skips undefined words:
 * the list (5 blocks) is lost, the record still reachable. */
#include "corpus.h"

struct rec {
	long id;
	char name[24];
	struct node *items[6];
};

struct rec *current;

__attribute__((noinline)) static void fill(struct rec *r)
{
	r->id = 1;
	for (int i = 0; i < 6; i++)
		r->items[i] = NULL;
	r->items[3] = list(5);
}

int main(void)
{
	struct rec *r = malloc(sizeof *r);
	fill(r);
	free(r);
	current = malloc(sizeof *current);
	current->id = 2;
	memcpy(current->name, "second", 7);
	return 0;
}
