/* A structure that outlives its buffer, with the words that described it:
 * a global std::vector destroyed at the exit keeps its begin, finish and
 * end of storage.  Under the allocators without headers between blocks
 * (jemalloc, mimalloc) the buffer's end is the start of the next block of
 * its size class, here a lost one, which that word kept still reachable;
 * valgrind, whose freed blocks wait in a queue between red zones, says
 * definitely lost (lib/scan.c, end_of_freed).  Written in C with
 * std::vector's layout, which is all either tool sees. */
#include "plain_leak_common.h"

struct vec {
	char *begin, *finish, *end;
};
struct vec g_vec;

__attribute__((noinline)) static void make(void)
{
	g_vec.begin = malloc(32);
	memset(g_vec.begin, 0, 32);
	g_vec.finish = g_vec.end = g_vec.begin + 32;
	char *volatile lost = malloc(32);
	memset(lost, 0, 32);
}

/* the vector's destructor: the buffer freed, the words left */
__attribute__((noinline)) static void destroy(void)
{
	free(g_vec.begin);
}

int main(void)
{
	make();
	destroy();
	scrub();
	return 0;
}
