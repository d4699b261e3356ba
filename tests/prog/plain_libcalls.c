/*
 * plain_libcalls.c - a passing program whose blocks the C library
 * allocates: fopen's FILE and buffer, strdup's copy, open_memstream's
 * growing buffer, each freed.  Their stacks start in the C library,
 * built without frame pointers: memcheck walks them by the call-frame
 * information and keeps the walks it repeats (stacks.c's memo, placed
 * in .text.mc_soon by lib/text-order.ld); tests/test_codeblocks.c
 * counts the 64 KiB blocks of memcheck's code it ran from (4 under
 * glibc, mimalloc and jemalloc before below45 made room for the memo
 * in the third block: 3).  Exit status 0 when every call worked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	int bad = 0;
	for (int i = 0; i < 50; i++) {
		FILE *f = fopen("/proc/self/stat", "r");
		char line[64];
		if (!f || !fgets(line, sizeof line, f))
			bad = 1;
		if (f)
			fclose(f);
		char *s = strdup("a copy the C library makes");
		bad |= !s;
		free(s);
		char *p = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&p, &n);
		if (!m || fprintf(m, "%d", i) < 0)
			bad = 1;
		if (m)
			fclose(m);
		free(p);
	}
	return bad;
}
