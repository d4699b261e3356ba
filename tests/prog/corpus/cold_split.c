/*
 * cold_split.c - a block lost in the cold part of a function: built -O2,
 * GCC moves lose()'s unlikely branch (it calls a cold function) into a
 * separate piece of code with a symbol of its own, lose.cold, a local
 * FUNC of its own size.  valgrind names the frame by that symbol,
 * "lose.cold"; memcheck named it by the DWARF subprogram, "lose", before
 * session 46 (tests/test_trial_aliases.c).  Loses 33 bytes in 1 block.
 */
#include "corpus.h"

void *volatile sink;
volatile int said;

__attribute__((cold, noinline)) static void note(int n)
{
	said = n;
}

__attribute__((noinline)) static int lose(int n, const char *s)
{
	int k = 0;
	for (int i = 0; i < n % 50; i++)
		k += (int)strlen(s) * i;
	if (n > 1000) {
		note(n);
		sink = malloc(33 + (size_t)(k & 0));
		sink = NULL;
		note(n + 1);
		return -1;
	}
	return n * 2 + k;
}

int main(int argc, char **argv)
{
	return lose(argc * 5000, argv[0]) == -1 ? 0 : 1;
}
