/*
 * region_rssfile.c - a region's end, then the program's own file-backed
 * RSS (tests/test_field.c): what memcheck read at the region's end (the
 * budget's baseline report, MEMCHECK_BASELINE) must not stay in the
 * program's RSS after it.
 *
 * usage: region_rssfile [FIELD]
 *   one region "work" (a block made and freed), then prints RssFile (or
 *   FIELD: RssAnon) of /proc/self/status in kB on a line of its own;
 *   exit 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static void *volatile sink;

int main(int argc, char **argv)
{
	char want[64];
	snprintf(want, sizeof want, "%s: %%ld kB", argc > 1 ? argv[1] : "RssFile");
	memcheck_begin("work");
	char *p = malloc(64);
	memset(p, 1, 64);
	sink = p;
	free(p);
	memcheck_end(NULL);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 2;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, want, &kb) == 1)
			break;
	fclose(f);
	printf("%ld\n", kb);
	return kb < 0 ? 3 : 0;
}
