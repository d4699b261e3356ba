/* An unreached cycle of two blocks of different sizes, the second made in
 * the place of a block just freed (under glibc, below the first): the
 * block made first is the definitely lost one, as under valgrind, whose
 * heap hands out fresh addresses in the order of allocation. */
#include "plain_leak_common.h"

struct first {
	void *other;
	char pad[88];
};
struct second {
	void *other;
	char pad[56];
};

__attribute__((noinline)) static void cycle(void)
{
	void *volatile spare = malloc(sizeof(struct second));
	memset(spare, 0, sizeof(struct second));
	struct first *volatile a = malloc(sizeof *a);
	memset(a, 0, sizeof *a);
	free(spare);
	struct second *volatile b = malloc(sizeof *b); /* spare's place */
	memset(b, 0, sizeof *b);
	a->other = b;
	b->other = a;
	a = NULL;
	b = NULL;
	spare = NULL;
}

int main(void)
{
	cycle();
	scrub();
	return 0;
}
