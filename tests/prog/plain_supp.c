/*
 * plain_supp.c - leak records for the suppression tests (test_suppress):
 * one allocation site per function of the malloc family, kept reachable
 * from a global ("reachable", the same kind under memcheck and under
 * valgrind with memcheck preloaded, whose block table valgrind scans), and
 * with "lost" as the first argument two definitely lost records besides.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "plain_leak_common.h"

void *volatile keep[5];

__attribute__((noinline)) static void keep_malloc(void) { keep[0] = malloc(48); }
__attribute__((noinline)) static void keep_calloc(void) { keep[1] = calloc(4, 32); }
__attribute__((noinline)) static void keep_realloc(void)
{
	keep[2] = realloc(NULL, 80);
}
__attribute__((noinline)) static void keep_memalign(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, 192) == 0)
		keep[3] = p;
}
__attribute__((noinline)) static void keep_twice(void) { keep[4] = malloc(256); }

__attribute__((noinline)) static void lose(size_t n)
{
	void *volatile p = malloc(n);
	memset(p, 1, n);
}
__attribute__((noinline)) static void lose_other(void) { lose(32); }

int main(int argc, char **argv)
{
	keep_malloc();
	keep_calloc();
	keep_realloc();
	keep_memalign();
	keep_twice();
	if (argc > 1 && strcmp(argv[1], "lost") == 0) {
		lose(64);
		lose(64);
		lose_other();
	}
	scrub();
	return 0;
}
