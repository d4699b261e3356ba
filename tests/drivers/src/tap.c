/* tap.c - a TAP test: two passing subtests; with an argument it also
 * leaks a block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

int main(int argc, char **argv)
{
	(void)argv;
	printf("1..2\nok 1 - first\nok 2 - second\n");
	if (argc > 1) {
		char *p = malloc(24);
		memset(p, 1, 24);
		sink = p;
		sink = NULL;
	}
	return 0;
}
