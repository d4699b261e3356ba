/* Cycles with no outside pointer: a ring of 5 (1 definite, 4 indirect),
 * a pair pointing at each other (1 definite, 1 indirect), a block
 * pointing to itself (definite); and a ring a global holds (reachable).
 * Blocks of a ring are the same size: which one valgrind calls definite
 * depends on addresses. */
#include "plain_leak_common.h"

struct ring { struct ring *next; char pad[56]; };
struct ring *volatile held;

__attribute__((noinline)) static struct ring *ring(int n)
{
	struct ring *first = calloc(1, sizeof *first), *last = first;
	for (int i = 1; i < n; i++) {
		struct ring *x = calloc(1, sizeof *x);
		last->next = x;
		last = x;
	}
	last->next = first;
	return first;
}

__attribute__((noinline)) static void lose(void)
{
	struct ring *volatile a = ring(5);
	struct ring *volatile b = ring(2);
	struct ring *volatile c = ring(1);
	(void)a, (void)b, (void)c;
}

int main(void)
{
	lose();
	held = ring(3);
	scrub();
	return 0;
}
