/* Doubly linked lists: one kept by a global head (all reachable), one
 * dropped whole (a cycle of back pointers: 1 definite, the rest
 * indirect), and one whose middle node is unlinked but not freed. */
#include "corpus.h"

struct dnode {
	struct dnode *prev, *next;
	long v;
};

struct dnode *kept;

__attribute__((noinline)) static struct dnode *dlist(int n)
{
	struct dnode *head = NULL;
	for (int i = 0; i < n; i++) {
		struct dnode *x = calloc(1, sizeof *x);
		x->next = head;
		if (head)
			head->prev = x;
		head = x;
	}
	return head;
}

int main(void)
{
	kept = dlist(10);
	USE(dlist(7));
	struct dnode *mid = kept->next->next->next;
	mid->prev->next = mid->next;
	mid->next->prev = mid->prev;
	return 0;
}
