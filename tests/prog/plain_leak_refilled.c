/* Definitely lost: blocks handed out again after a batch of the same size
 * was freed, then dropped.  The allocator's central caches (tcmalloc's
 * transfer cache slots, in its own data) keep the addresses of the batch
 * they took back and handed out again; the program holds none of them. */
#include "plain_leak_common.h"

#define N 4000

__attribute__((noinline)) static void leak(size_t n)
{
	void *volatile p = malloc(n);
	memset(p, 0, n);
}

int main(void)
{
	void **keep = malloc(N * sizeof *keep);
	for (int i = 0; i < N; i++)
		keep[i] = malloc(48);
	for (int i = 0; i < N; i++)
		free(keep[i]);
	free(keep);
	for (int i = 0; i < N; i++)
		leak(48);
	scrub();
	return 0;
}
