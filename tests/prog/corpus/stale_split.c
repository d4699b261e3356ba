/* A lost record reused from a freed one whose tail held a list: the old
 * pointer, 192 bytes into the record and never written in its second
 * life, is undefined to valgrind, which finds the list lost on its own
 * (the record and the list's head definitely lost, the list's other two
 * nodes indirectly).  Followed, it makes the whole list look indirectly
 * lost, reached from the lost record: the same lost bytes, split
 * otherwise (memcheck cleaning only the first 64 bytes of new blocks). */
#include "corpus.h"

struct rec {
	long id;
	char name[184];
	struct node *tail;
};

__attribute__((noinline)) static void fill(struct rec *r)
{
	r->id = 1;
	memset(r->name, 'x', sizeof r->name);
	r->tail = list(3);
}

int main(void)
{
	struct rec *r = malloc(sizeof *r);
	fill(r);
	free(r);
	r = malloc(sizeof *r);
	r->id = 2;
	memcpy(r->name, "second", 7);
	USE(r);
	return 0;
}
