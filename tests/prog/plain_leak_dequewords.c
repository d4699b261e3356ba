/* A structure destroyed at the exit keeps words that point into freed
 * buffers far below, and the next global holds a live block: a global
 * std::deque (its map, its start and finish iterators: cur, first, last,
 * node) destroyed before the exit, then a pointer to a std::list kept
 * for life.  The deque's words are no end of a buffer that lay right
 * before the block: its 512-byte buffers and its map are of other size
 * classes, not the block's neighbours (lib/scan.c, end_of_freed).  The
 * block and what hangs from it are still reachable, as valgrind says;
 * under jemalloc, mimalloc and tcmalloc memcheck said definitely lost.
 * Written in C with libstdc++'s layout, which is all either tool sees. */
#include "plain_leak_common.h"

struct iter {
	int *cur, *first, *last;
	int **node;
};
struct deque {
	int **map;
	size_t map_size;
	struct iter start, finish;
};
struct node {
	struct node *next, *prev;
	char text[32];
};

/* side by side, in this order, as a program's globals */
struct globals {
	struct deque deque;
	struct node *list;
} g;

__attribute__((noinline)) static void make(void)
{
	g.deque.map_size = 8;
	g.deque.map = malloc(g.deque.map_size * sizeof *g.deque.map);
	int *buf = malloc(512);
	memset(buf, 0, 512);
	g.deque.map[3] = buf;
	g.deque.start = (struct iter){ buf, buf, buf + 128, g.deque.map + 3 };
	g.deque.finish = (struct iter){ buf + 100, buf, buf + 128, g.deque.map + 3 };
	/* a list head kept for life, and its nodes */
	g.list = malloc(sizeof *g.list);
	memset(g.list, 0, sizeof *g.list);
	struct node *prev = g.list;
	for (int i = 0; i < 4; i++) {
		struct node *n = malloc(sizeof *n);
		memset(n, 0, sizeof *n);
		prev->next = n;
		n->prev = prev;
		prev = n;
	}
}

/* the deque's destructor: its buffer and map freed, the words left */
__attribute__((noinline)) static void destroy(void)
{
	free(g.deque.map[3]);
	free(g.deque.map);
}

int main(void)
{
	make();
	destroy();
	scrub();
	return 0;
}
