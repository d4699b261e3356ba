/* Pointers kept only in the program's own anonymous mappings: a
 * private one (a custom arena) and one grown with mremap: still
 * reachable.  A block pointed to only from a mapping unmapped since:
 * lost. */
#include <sys/mman.h>
#include "corpus.h"

int main(void)
{
	void **arena = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **grown = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || grown == MAP_FAILED || gone == MAP_FAILED)
		return 2;
	arena[1000] = list(3);
	grown[10] = malloc(100);
	grown = mremap(grown, 4096, 1 << 20, MREMAP_MAYMOVE);
	if (grown == MAP_FAILED)
		return 2;
	grown[100000] = malloc(200);
	gone[7] = list(2);
	munmap(gone, 4096);
	return 0;
}
