/* A frame that reserves a large buffer it never fills, and calls exit
 * from there: its live frame covers, unwritten, the stack that earlier
 * calls used, malloc's own frames included, where the address of a
 * block lost since still lies.  valgrind skips the buffer's words as
 * undefined: lost. */
#include "corpus.h"

__attribute__((noinline)) static void make(int n)
{
	for (int i = 0; i < n; i++)
		USE(malloc(48 + i));
}

__attribute__((noinline)) static void finish(int n)
{
	char big[8192];
	big[n] = 1;
	USE(big);
	exit(0);
}

int main(int argc, char **argv)
{
	(void)argv;
	make(argc + 2);
	finish(argc);
	return 0;
}
