/* A tree of 100,000 nodes kept by a global (still reachable), and one
 * of its subtrees cut off (lost: its root definite, the rest indirect). */
#include "corpus.h"

struct tree *root;

int main(int argc, char **argv)
{
	(void)argv;
	root = tree(0, 100000);
	struct tree *t = root;
	for (int i = 0; i < 3 + argc; i++)
		t = t->l;
	t->r = NULL; /* 100000 >> 5 nodes or so, lost */
	return 0;
}
