/* Pointers kept only in file-backed mappings the program writes: a
 * private copy-on-write one and a shared one of a temporary file:
 * still reachable.  One in a file mapping since unmapped: lost. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "corpus.h"

int main(void)
{
	char name[] = "/tmp/corpus_fmapXXXXXX";
	int fd = mkstemp(name);
	if (fd < 0)
		return 2;
	unlink(name);
	if (ftruncate(fd, 3 * 4096))
		return 2;
	void **priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	void **shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
	void **gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 8192);
	if (priv == MAP_FAILED || shared == MAP_FAILED || gone == MAP_FAILED)
		return 2;
	priv[2] = list(2);
	shared[4] = malloc(120);
	gone[6] = malloc(136);
	munmap(gone, 4096);
	close(fd);
	return 0;
}
