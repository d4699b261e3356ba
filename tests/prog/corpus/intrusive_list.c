/* Intrusive lists, as kernels and event loops keep them: a list_head
 * embedded in each object after an id, the head a global, every link
 * pointing at the next object's list_head (8 bytes in): interior
 * pointers only, so possibly lost, but an object whose first word (its
 * id, from 1) divides the rest of its size passes for a new[] array of
 * objects with destructors, reachable where the pointer comes from
 * reachable memory (valgrind's heuristic newarray): the first two here,
 * from the head and then from the first; the third's id does not divide,
 * and what only it and the others lead to stays possibly lost.  A list
 * whose list_head comes first is reached by start pointers. */
#include "corpus.h"

struct list_head {
	struct list_head *next, *prev;
};

struct obj {
	long id;
	struct list_head link;
	long data[2];
};

struct first {
	struct list_head link;
	long id;
};

struct list_head objs = { &objs, &objs }, firsts = { &firsts, &firsts };

static void add(struct list_head *head, struct list_head *n)
{
	n->next = head;
	n->prev = head->prev;
	head->prev->next = n;
	head->prev = n;
}

int main(void)
{
	for (long i = 1; i <= 12; i++) {
		struct obj *o = malloc(sizeof *o);
		o->id = i;
		add(&objs, &o->link);
	}
	for (long i = 0; i < 5; i++) {
		struct first *f = malloc(sizeof *f);
		f->id = i;
		add(&firsts, &f->link);
	}
	return 0;
}
