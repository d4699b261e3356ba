/* Two vectors one after the other in a structure, each a buffer's
 * begin, finish and end of storage (std::vector's three words), whose
 * buffers the allocator put side by side: the first's end is the
 * second's begin, and the structure holds that address three times, the
 * third as the second vector's begin, followed by its own finish and
 * end.  GoogleTest's TestSuite keeps its tests (std::vector<TestInfo*>)
 * and their indices (std::vector<int>) so; a process that died in a
 * test (a death test's child) had each one-test suite's indices
 * definitely lost under jemalloc, mimalloc and tcmalloc, where memcheck
 * took the second begin for the first buffer's end; valgrind, whose red
 * zones keep blocks apart, finds both buffers still reachable, as they
 * must be under every allocator.
 *
 * Under glibc the chunk header lies between the two: apart. */
#include <stdint.h>
#include <unistd.h>

#include "plain_leak_common.h"

#define SIZE 16
#define TRIES 64

struct vectors {
	void **tests, **tests_finish, **tests_end;
	int *indices, *indices_finish, *indices_end;
};
struct vectors suite;

/* Two buffers of SIZE side by side, the lower one the tests', if the
 * allocator hands two out so within TRIES (upwards or downwards); the
 * others tried are freed. */
__attribute__((noinline)) static int vectors_new(void)
{
	char *tried[2 * TRIES];
	int n = 0, adjacent = 0;
	while (n < 2 * TRIES) {
		tried[n] = malloc(SIZE);
		tried[n + 1] = malloc(SIZE);
		n += 2;
		uintptr_t a = (uintptr_t)tried[n - 2], b = (uintptr_t)tried[n - 1];
		if ((adjacent = a + SIZE == b || b + SIZE == a))
			break;
	}
	for (int i = 0; i < n - 2; i++)
		free(tried[i]);
	char *lo = tried[n - 2], *hi = tried[n - 1];
	if (hi < lo) {
		lo = tried[n - 1];
		hi = tried[n - 2];
	}
	memset(lo, 0, SIZE);
	memset(hi, 0, SIZE);
	suite.tests = (void **)lo;
	suite.tests_finish = suite.tests_end = (void **)(lo + SIZE);
	suite.indices = (int *)hi;
	suite.indices_finish = suite.indices_end = (int *)(hi + SIZE);
	return adjacent;
}

int main(void)
{
	int adjacent = vectors_new();
	scrub();
	/* what the test checks happened: under jemalloc, mimalloc and
	 * tcmalloc the buffers lie side by side */
	const char *say = adjacent ? "vectors: adjacent\n" : "vectors: apart\n";
	if (write(1, say, strlen(say)) < 0)
		return 1;
	return 0;
}
