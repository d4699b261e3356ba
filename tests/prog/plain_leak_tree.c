/* A lost binary tree of 31 nodes: 1 definite, 30 indirect; and a kept
 * tree of 15 (a global points at its root): all still reachable. */
#include "plain_leak_common.h"

struct tree { struct tree *l, *r; char pad[16]; };
struct tree *volatile kept;

__attribute__((noinline)) static struct tree *build(int depth)
{
	if (!depth)
		return NULL;
	struct tree *t = calloc(1, sizeof *t);
	t->l = build(depth - 1);
	t->r = build(depth - 1);
	return t;
}

__attribute__((noinline)) static void lose(void)
{
	struct tree *volatile t = build(5);
	(void)t;
}

int main(void)
{
	lose();
	kept = build(4);
	scrub();
	return 0;
}
