/* name.c - the project's library: a copy of a name, for the caller to
 * free (leak.c does not). */
#include <stdlib.h>
#include <string.h>

char *parse_name(const char *s);

char *parse_name(const char *s)
{
	char *p = malloc(strlen(s) + 1); /* LEAK-SITE */
	if (p)
		strcpy(p, s);
	return p;
}
