/* A tree of 100,000 nodes that a global holds until an exit handler
 * drops it: lost in the handler (1 definite, 99,999 indirect), which
 * walks the tree first, leaving addresses in its dead frames. */
#include "corpus.h"

static struct tree *root;

__attribute__((noinline)) static long depth(const struct tree *t)
{
	if (!t)
		return 0;
	long l = depth(t->l), r = depth(t->r);
	return 1 + (l > r ? l : r);
}

static void drop(void)
{
	if (depth(root) > 0)
		root = NULL;
}

int main(void)
{
	root = tree(0, 100000);
	atexit(drop);
	return 0;
}
