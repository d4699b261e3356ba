/* clean.c - a test that frees what it allocates, or exits with the
 * status given (77: a test that skips itself). */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *p = malloc(64);
	if (!p)
		return 99;
	strcpy(p, "clean");
	free(p);
	return argc > 1 ? atoi(argv[1]) : 0;
}
