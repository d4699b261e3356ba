/*
 * plain_mmap_where.c - where the program's own mappings land, each
 * against its first: a mapping made before any allocation, then
 * allocations made in the C library (strdup, fopen), whose stacks
 * memcheck walks through the C library's call-frame table (a measured
 * process's first such walk maps memcheck's own view of that table,
 * lib/ownread.c), then more mappings.  Bare, the kernel puts each
 * next anonymous mapping just below the one before; a mapping of
 * memcheck's asked for with mmap(NULL) between them took the place and
 * moved every later one lower (test_rss_self's "mappings' places").
 * Prints "mmap_where: N=OFFSET ..." (KiB below the first), on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fixed_layout.h"

#define SPAN (64 * 1024)
#define LATER 4

static void *anon(void)
{
	void *p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(2);
	return p;
}

int main(int argc, char **argv)
{
	(void)argc;
	rss_self_fixed_layout(argv);
	char *first = anon();
	for (int i = 0; i < 4; i++) {
		char *s = strdup("a string of the C library's making");
		FILE *f = fopen("/proc/self/stat", "r");
		if (!s || !f)
			return 2;
		fclose(f);
		free(s);
	}
	char *later[LATER];
	for (int i = 0; i < LATER; i++)
		later[i] = anon();
	printf("mmap_where:");
	for (int i = 0; i < LATER; i++)
		printf(" %d=%lld", i, (long long)(first - later[i]) / 1024);
	printf("\n");
	return 0;
}
