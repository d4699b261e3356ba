/*
 * leak_here.h - the leak of tests/prog/plain_closeall.c, plain_dropuid.c
 * and plain_quickexit.c (tests/test_harden.c): n bytes from leak_here(),
 * a function of its own, so that the report names it.
 */
#ifndef LEAK_HERE_H
#define LEAK_HERE_H
#include <stdlib.h>
#include <string.h>

/* A block of n bytes, written, whose address the caller drops. */
__attribute__((noinline, unused)) static void *leak_here(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

/* leak_here(n), its address dropped at once. */
__attribute__((noinline, unused)) static void leak(size_t n)
{
	volatile void *p = leak_here(n);
	p = NULL;
	(void)p;
}
#endif
