/* Interior pointers from lost and from possibly lost blocks: a lost
 * record holds a pointer into the middle of a buffer (the buffer is
 * indirectly lost: valgrind does not tell interior from start pointers
 * there); a global points into the middle of a block that holds a start
 * pointer to another (both possibly lost); a reachable block holds a
 * pointer into a third (possibly lost). */
#include "corpus.h"

struct rec {
	char *cursor;
	long n;
};

void *into;
struct rec *kept;

int main(void)
{
	struct rec *r = malloc(sizeof *r);
	r->cursor = (char *)malloc(256) + 100;
	USE(r);
	void **a = malloc(64);
	a[0] = malloc(48);
	into = (char *)a + 40;
	kept = malloc(sizeof *kept);
	kept->cursor = (char *)malloc(128) + 64;
	return 0;
}
