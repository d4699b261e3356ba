/* Possibly lost: a block a global points into (not at its start), and a
 * block only that one points to; and a lost block pointing into another
 * lost block (indirect). */
#include "plain_leak_common.h"

char *volatile inside;

__attribute__((noinline)) static void lose(void)
{
	char *volatile a = calloc(1, 96);
	char *volatile b = calloc(1, 64);
	*(char *volatile *)(a + 48) = b + 32;
}

int main(void)
{
	char *blk = calloc(1, 64);
	*(void *volatile *)(blk + 16) = calloc(1, 32);
	inside = blk + 40;
	blk = NULL;
	lose();
	scrub();
	return 0;
}
