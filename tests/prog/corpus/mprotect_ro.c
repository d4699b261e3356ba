/* A table sealed read-only after it is filled (mprotect PROT_READ), and
 * one made inaccessible (PROT_NONE): valgrind reads only mappings it
 * may read and write, so what they alone point to is lost.  A table
 * left writable keeps its block. */
#include <sys/mman.h>
#include "corpus.h"

int main(void)
{
	void **ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **none = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || none == MAP_FAILED || rw == MAP_FAILED)
		return 2;
	ro[3] = list(2);
	none[5] = malloc(72);
	rw[9] = malloc(88);
	mprotect(ro, 4096, PROT_READ);
	mprotect(none, 4096, PROT_NONE);
	return 0;
}
