/* An arena allocator built on malloc: 4 KiB chunks chained through
 * their first word, objects carved out of them pointing at each other
 * (interior pointers into the chunks).  One arena kept by a global
 * (reachable); one dropped whole (its newest chunk definite, the older
 * chunks indirect); of a third only an object is kept, a pointer into
 * the middle of its chunk (possibly lost, and the older chunk it links
 * to too). */
#include <stdint.h>
#include "corpus.h"

struct chunk {
	struct chunk *prev;
	size_t used;
	char mem[4096 - 16];
};

struct arena {
	struct chunk *cur;
};

static void *carve(struct arena *a, size_t n)
{
	if (!a->cur || a->cur->used + n > sizeof a->cur->mem) {
		struct chunk *c = malloc(sizeof *c);
		c->prev = a->cur;
		c->used = 0;
		a->cur = c;
	}
	void *p = a->cur->mem + a->cur->used;
	a->cur->used += (n + 15) & ~(size_t)15;
	return p;
}

struct obj {
	struct obj *next;
	char text[200];
};

static struct obj *fill(struct arena *a, int n)
{
	struct obj *first = NULL;
	for (int i = 0; i < n; i++) {
		struct obj *o = carve(a, sizeof *o);
		o->next = first;
		first = o;
	}
	return first;
}

struct arena kept;
struct obj *one;

int main(void)
{
	USE(fill(&kept, 50));
	struct arena dropped = { NULL };
	USE(fill(&dropped, 50));
	struct arena partial = { NULL };
	fill(&partial, 30);
	one = carve(&partial, sizeof *one);
	return 0;
}
