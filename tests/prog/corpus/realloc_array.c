/* An array of pointers grown with realloc one element at a time: its
 * old copies (freed) still hold the addresses.  One array kept by a
 * global with its 50 strings; one dropped (definite, its 30 elements
 * indirect). */
#include "corpus.h"

char **kept;

__attribute__((noinline)) static char **grow(int n)
{
	char **v = NULL;
	for (int i = 0; i < n; i++) {
		v = realloc(v, (i + 1) * sizeof *v);
		v[i] = malloc(16 + i);
		memset(v[i], 'a', 15);
	}
	return v;
}

int main(void)
{
	kept = grow(50);
	USE(grow(30));
	return 0;
}
