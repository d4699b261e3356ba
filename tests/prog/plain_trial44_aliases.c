/*
 * plain_trial44_aliases.c - a block lost through each of five C library
 * functions that glibc defines under two names at one address and size
 * (weak_alias: strdup and __strdup, strndup and __strndup, asprintf and
 * __asprintf, tsearch and __tsearch, getdelim and __getdelim), for
 * tests/test_trial_aliases.c.  valgrind names each frame by the shorter
 * name; libdw by the global symbol, the __ one.
 *
 * Its one argument says what to lose: "all" the five (4, 5, 2, 24 and
 * 120 bytes: tsearch's node, getdelim's line buffer), "none" nothing.
 */
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* lost: each block's only pointer dropped before the exit */
static void *volatile sink;

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "all") != 0 && strcmp(argv[1], "none") != 0)) {
		fprintf(stderr, "usage: %s all|none\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "none") == 0)
		return 0;
	sink = strdup("abc");
	sink = strndup("abcdef", 4);
	char *s;
	if (asprintf(&s, "%d", 7) < 0)
		return 1;
	sink = s;
	void *root = NULL;
	if (!tsearch("key", &root, cmp))
		return 1;
	root = NULL;
	FILE *f = fmemopen("line\n", 5, "r");
	char *line = NULL;
	size_t n = 0;
	if (!f || getdelim(&line, &n, '\n', f) < 0)
		return 1;
	fclose(f);
	sink = line;
	line = NULL;
	sink = NULL;
	return 0;
}
