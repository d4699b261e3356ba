/* Definitely lost: blocks nothing points to. */
#include "plain_leak_common.h"

__attribute__((noinline)) static void leak(size_t n)
{
	void *volatile p = malloc(n);
	memset(p, 0, n);
}

int main(void)
{
	for (int i = 0; i < 10; i++)
		leak(48);
	leak(4096);
	scrub();
	return 0;
}
