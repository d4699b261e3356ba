/*
 * regions_many.c - N regions one after another, each with a block
 * allocated and freed (its peak a stack of the program's): the process's
 * resident set, memcheck's own memory with it, must not grow with the
 * regions.  Prints "flat" when VmRSS after N regions is within 1 MiB of
 * what it was after N/4, else how much it grew.  On main each region's
 * end left a page of memcheck's behind (its peak snapshot's array grown
 * in a copy of the region: lib/region.c), 4 KiB a region.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static void *volatile sink;

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

static void regions(int n)
{
	for (int i = 0; i < n; i++) {
		memcheck_begin("many");
		sink = malloc(1000);
		free(sink);
		memcheck_end(NULL);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	regions(n / 4);
	long before = rss_kib();
	regions(n - n / 4);
	long after = rss_kib();
	if (before < 0 || after < 0)
		return 1;
	if (after - before < 1024)
		printf("flat\n");
	else
		printf("grew %ld KiB over %d regions\n", after - before, n - n / 4);
	return 0;
}
