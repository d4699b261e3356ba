/* longjmp out of deep frames that held blocks: the frames are dead, the
 * blocks they held lost; a block kept in a global jmp_buf's neighbour
 * reachable. */
#include <setjmp.h>
#include "corpus.h"

static jmp_buf env;
struct node *kept;

__attribute__((noinline)) static void dive(int n)
{
	struct node *volatile mine = list(1);
	USE(mine);
	if (!n)
		longjmp(env, 1);
	if (n > 0)
		dive(n - 1);
}

int main(void)
{
	kept = list(2);
	if (!setjmp(env))
		dive(5);
	return 0;
}
