/* Deep recursion (20,000 frames), each frame holding a block it loses
 * on the way back: all definitely lost.  The dead frames below main
 * still hold every address. */
#include "corpus.h"

__attribute__((noinline)) static long down(int n)
{
	if (!n)
		return 0;
	char *volatile p = malloc(24);
	p[0] = (char)n;
	return down(n - 1) + p[0];
}

int main(void)
{
	return down(20000) == 0;
}
