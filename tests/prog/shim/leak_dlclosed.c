/* The library tests/prog/plain_leak_dlclosed.c opens, leaks from and
 * closes. */
#include <stdlib.h>
#include <string.h>

void *leak_dlclosed_make(size_t n);

void *leak_dlclosed_make(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 7, n);
	return p;
}
