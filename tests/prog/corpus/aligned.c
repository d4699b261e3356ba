/* Aligned blocks from posix_memalign, aligned_alloc, memalign and
 * valloc: two kept by globals, two lost, one lost but pointed into. */
#include <malloc.h>
#include "corpus.h"

void *kept1, *kept2;
char *into;

int main(void)
{
	void *p;
	if (posix_memalign(&p, 64, 200))
		return 2;
	kept1 = p;
	kept2 = aligned_alloc(256, 512);
	USE(memalign(4096, 100));
	USE(valloc(300));
	if (posix_memalign(&p, 128, 96))
		return 2;
	into = (char *)p + 8;
	return 0;
}
